#include "serve/space_index.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "backend/profile.h"
#include "core/atomic_file.h"
#include "core/json_output.h"
#include "core/text.h"
#include "dataset/causes.h"
#include "dataset/dataset.h"
#include "dataset/diff.h"
#include "dataset/row_json.h"
#include "plan/predict.h"
#include "serve/url.h"
#include "serve/version_order.h"
#include "task/task.h"

namespace canrun::serve {
namespace {

using dataset::VerdictRow;
using nlohmann::json;

//! A query parameter's value; empty when not given.
std::string param_of(const std::map<std::string, std::string>& params, const char* name) {
  const auto found = params.find(name);
  return found == params.end() ? std::string() : found->second;
}

std::string lookup_key(std::string_view model_id, std::string_view task) {
  std::string key;
  key.reserve(model_id.size() + task.size() + 1);
  key.append(model_id).push_back('\n');
  key.append(task);
  return key;
}

json stack_json(const dataset::StackKey& key) {
  return {{"backend", key.backend},
          {"compiler", key.compiler},
          {"compiler_version", key.compiler_version},
          {"library", key.library},
          {"library_version", key.library_version},
          {"display", key.display()},
          {"stem", key.stem()}};
}

//! Sets `status` and its display class `status_class` ("pass", "fail", "warn", "excluded",
//! "untested"): the row's result; without a row, EXCLUDED when the catalog excludes the model,
//! else "not tested". The page draws its badge from the class, so it never classifies results.
void put_status(json& out, const VerdictRow* row, bool catalog_excludes) {
  if (row) {
    out["status"] = to_string(row->result);
    out["status_class"] = display_class(row->result);
  } else if (catalog_excludes) {
    out["status"] = to_string(VerdictResult::kExcluded);
    out["status_class"] = display_class(VerdictResult::kExcluded);
  } else {
    out["status"] = "not tested";
    out["status_class"] = kUntestedClass;
  }
}

//! A query's input `name` is wrong: an HTTP 400 that names it.
Error bad_parameter(std::string name, std::string message) {
  return invalid_argument(std::move(message)).with_reason(reason::kBadParameter, {std::move(name)});
}

std::string known_list(const std::vector<std::string>& names) {
  if (names.empty()) return "none";
  return fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace

namespace {

// The API's names of the views and sorts, in the order the API lists them.
constexpr std::pair<View, std::string_view> kViewNames[] = {{View::kSelected, "selected"},
                                                            {View::kTrending, "trending"},
                                                            {View::kDownloads, "downloads"},
                                                            {View::kTested, "tested"}};
constexpr std::pair<TestedSort, std::string_view> kSortNames[] = {
    {TestedSort::kName, "name"},     {TestedSort::kVerdict, "verdict"},
    {TestedSort::kCores, "cores"},   {TestedSort::kRuntime, "runtime"},
    {TestedSort::kMemory, "memory"}, {TestedSort::kDecode, "decode"}};

template <typename Enum, std::size_t N>
std::string_view name_in(const std::pair<Enum, std::string_view> (&table)[N], Enum value) {
  for (const auto& [entry, name] : table) {
    if (entry == value) return name;
  }
  return table[0].second;
}

template <typename Enum, std::size_t N>
std::optional<Enum> parse_in(const std::pair<Enum, std::string_view> (&table)[N],
                             std::string_view text) {
  for (const auto& [entry, name] : table) {
    if (name == text) return entry;
  }
  return std::nullopt;
}

}  // namespace

std::string_view view_name(View view) { return name_in(kViewNames, view); }
std::optional<View> parse_view(std::string_view text) { return parse_in(kViewNames, text); }
std::string_view sort_name(TestedSort sort) { return name_in(kSortNames, sort); }
std::optional<TestedSort> parse_sort(std::string_view text) { return parse_in(kSortNames, text); }

StackVerdicts::StackVerdicts(dataset::StackKey key, std::vector<VerdictRow> rows)
    : key_(std::move(key)), rows_(std::move(rows)) {
  by_model_task_.reserve(rows_.size());
  for (std::size_t idx = 0; idx < rows_.size(); ++idx) {
    by_model_task_.emplace(lookup_key(rows_[idx].model_id, rows_[idx].task), idx);
  }
}

const VerdictRow* StackVerdicts::find(std::string_view model_id, std::string_view task) const {
  const auto found = by_model_task_.find(lookup_key(model_id, task));
  return found == by_model_task_.end() ? nullptr : &rows_[found->second];
}

std::shared_ptr<const SpaceIndex> SpaceIndex::build(IndexInputs inputs) {
  auto index = std::shared_ptr<SpaceIndex>(new SpaceIndex());
  index->inputs_ = std::move(inputs);
  const IndexInputs& in = index->inputs_;

  std::map<std::string, std::size_t> rows_per_backend;
  std::set<std::string> tasks;
  for (const auto& stack : in.stacks) {
    index->stacks_.push_back(stack.get());
    index->row_count_ += stack->rows().size();
    rows_per_backend[stack->key().backend] += stack->rows().size();
    for (const VerdictRow& row : stack->rows()) tasks.insert(row.task);
  }
  std::sort(index->stacks_.begin(), index->stacks_.end(),
            [](const StackVerdicts* a, const StackVerdicts* b) {
              const auto& ka = a->key();
              const auto& kb = b->key();
              if (ka.backend != kb.backend) return ka.backend < kb.backend;
              if (int order = compare_versions(ka.compiler_version, kb.compiler_version)) {
                return order > 0;
              }
              if (ka.library != kb.library) return ka.library > kb.library;
              return compare_versions(ka.library_version, kb.library_version) > 0;
            });
  for (const auto& [backend, rows] : rows_per_backend) index->backends_.push_back(backend);
  std::stable_sort(index->backends_.begin(), index->backends_.end(),
                   [&](const std::string& a, const std::string& b) {
                     return rows_per_backend[a] > rows_per_backend[b];
                   });

  // Rankings: each snapshot is a view; the Selected view borrows their numbers.
  std::map<std::pair<std::string, std::string>, std::unordered_map<std::string, const RankedModel*>>
      ranked_by_id;
  for (const RankingSnapshot& snapshot : in.rankings) {
    tasks.insert(snapshot.task);
    auto& by_id = ranked_by_id[{snapshot.task, std::string(hub::ranking_sort_name(snapshot.sort))}];
    for (const RankedModel& model : snapshot.models) by_id.emplace(model.id, &model);
  }
  auto ranked = [&](const std::string& task, const char* sort,
                    const std::string& id) -> const RankedModel* {
    const auto table = ranked_by_id.find({task, sort});
    if (table == ranked_by_id.end()) return nullptr;
    const auto found = table->second.find(id);
    return found == table->second.end() ? nullptr : found->second;
  };
  for (const auto& [task, models] : in.catalog.selected) {
    tasks.insert(task);
    for (const CuratedModel& model : models) {
      if (!model.note.empty()) index->notes_.emplace(model.id, model.note);
    }
  }
  for (const std::string& task : tasks) {
    auto& selected = index->views_[{task, View::kSelected}];
    if (const auto found = in.catalog.selected.find(task); found != in.catalog.selected.end()) {
      int rank = 0;
      for (const CuratedModel& model : found->second) {
        selected.push_back({model.id, ascii_lower(model.id), ++rank,
                            ranked(task, "downloads", model.id), ranked(task, "trending", model.id),
                            model.note});
      }
    }
    index->views_[{task, View::kTrending}];
    index->views_[{task, View::kDownloads}];
  }
  for (const RankingSnapshot& snapshot : in.rankings) {
    const View view =
        snapshot.sort == hub::RankingSort::kTrending ? View::kTrending : View::kDownloads;
    auto& entries = index->views_[{snapshot.task, view}];
    entries.clear();
    int rank = 0;
    for (const RankedModel& model : snapshot.models) {
      const auto note = index->notes_.find(model.id);
      entries.push_back({model.id, ascii_lower(model.id), ++rank,
                         ranked(snapshot.task, "downloads", model.id),
                         ranked(snapshot.task, "trending", model.id),
                         note == index->notes_.end() ? std::string() : note->second});
    }
    index->ranked_count_ += snapshot.models.size();
  }
  index->tasks_.assign(tasks.begin(), tasks.end());
  // In the task registry's order (text-generation first: the task most people come for), then
  // tasks it does not know, by name.
  const std::vector<std::string> registered = task::task_names();
  const auto place = [&](const std::string& name) {
    return std::find(registered.begin(), registered.end(), name) - registered.begin();
  };
  std::stable_sort(index->tasks_.begin(), index->tasks_.end(),
                   [&](const std::string& a, const std::string& b) { return place(a) < place(b); });
  return index;
}

std::optional<std::string> SpaceIndex::prefetch_command(const std::string& backend,
                                                        const std::string& compiler_version) const {
  const auto found = inputs_.prefetch_templates.find(backend);
  if (found == inputs_.prefetch_templates.end()) return std::nullopt;
  backend::BackendProfile profile;
  profile.cache_prefetch = found->second;
  return profile.prefetch_command(compiler_version);
}

std::optional<CatalogExclusion> SpaceIndex::exclusion_of(std::string_view model_id) const {
  if (!inputs_.catalog.exclusion) return std::nullopt;
  auto id = ModelId::parse(model_id);
  if (!id.ok()) return std::nullopt;
  return inputs_.catalog.exclusion(*id);
}

json SpaceIndex::versions_json() const {
  json backends = json::array();
  json stacks = json::array();
  for (const std::string& backend : backends_) {
    json entry = {{"name", backend}, {"stacks", json::array()}};
    for (const StackVerdicts* stack : stacks_) {
      if (stack->key().backend != backend) continue;
      std::size_t passed = 0;
      for (const VerdictRow& row : stack->rows()) passed += row.result == VerdictResult::kPass;
      json item = stack_json(stack->key());
      item["rows"] = stack->rows().size();
      item["passed"] = passed;
      entry["stacks"].push_back(item);
      stacks.push_back(item);
    }
    entry["compiler"] = entry["stacks"].empty() ? "" : entry["stacks"][0]["compiler"];
    backends.push_back(std::move(entry));
  }
  json defaults = nullptr;
  if (!backends_.empty()) {
    for (const StackVerdicts* stack : stacks_) {
      if (stack->key().backend == backends_.front()) {
        defaults = stack_json(stack->key());
        break;
      }
    }
  }
  return {{"backends", backends},
          {"stacks", stacks},
          {"tasks", tasks_},
          {"views", {"selected", "trending", "downloads", "tested"}},
          {"default", defaults}};
}

Result<const StackVerdicts*> SpaceIndex::resolve_stack(const std::string& backend,
                                                       const std::string& compiler_version,
                                                       const std::string& library_version) const {
  if (stacks_.empty()) {
    if (!backend.empty() || !compiler_version.empty() || !library_version.empty()) {
      return invalid_argument("the dataset has no results yet, so no stack can be chosen")
          .with_reason(reason::kBadParameter, {"backend", "compiler_version", "library_version"});
    }
    return static_cast<const StackVerdicts*>(nullptr);
  }
  const std::string chosen_backend = backend.empty() ? backends_.front() : backend;
  if (std::find(backends_.begin(), backends_.end(), chosen_backend) == backends_.end()) {
    return bad_parameter("backend",
                         fmt::format("backend {} has no results; known: {}",
                                     quote_for_message(chosen_backend), known_list(backends_)));
  }
  std::vector<std::string> compiler_versions;
  std::vector<std::string> library_versions;
  const StackVerdicts* chosen = nullptr;
  for (const StackVerdicts* stack : stacks_) {  // newest first
    const auto& key = stack->key();
    if (key.backend != chosen_backend) continue;
    if (std::find(compiler_versions.begin(), compiler_versions.end(), key.compiler_version) ==
        compiler_versions.end()) {
      compiler_versions.push_back(key.compiler_version);
    }
    if (!compiler_version.empty() && key.compiler_version != compiler_version) continue;
    if (compiler_version.empty() && key.compiler_version != compiler_versions.front()) continue;
    library_versions.push_back(key.library_version);
    if (!library_version.empty() && key.library_version != library_version) continue;
    if (!chosen) chosen = stack;
  }
  if (!compiler_version.empty() && std::find(compiler_versions.begin(), compiler_versions.end(),
                                             compiler_version) == compiler_versions.end()) {
    return bad_parameter("compiler_version",
                         fmt::format("compiler_version {} has no results on backend {}; known: {}",
                                     quote_for_message(compiler_version), chosen_backend,
                                     known_list(compiler_versions)));
  }
  if (!chosen) {
    return bad_parameter("library_version",
                         fmt::format("library_version {} has no results with that compiler "
                                     "version on backend {}; known: {}",
                                     quote_for_message(library_version), chosen_backend,
                                     known_list(library_versions)));
  }
  return chosen;
}

json SpaceIndex::entry_json(const ViewEntry& entry, const std::string& task,
                            const StackVerdicts& stack) const {
  const RankedModel* numbers = entry.downloads ? entry.downloads : entry.trending;
  json out = {
      {"rank", entry.rank},
      {"id", entry.id},
      {"downloads", numbers ? json(numbers->downloads) : json(nullptr)},
      {"likes", numbers ? json(numbers->likes) : json(nullptr)},
      {"trending_score", entry.trending ? json(entry.trending->trending_score) : json(nullptr)},
      {"note", entry.note.empty() ? json(nullptr) : json(entry.note)}};
  const VerdictRow* row = stack.find(entry.id, task);
  const auto exclusion =
      row && row->result != VerdictResult::kExcluded ? std::nullopt : exclusion_of(entry.id);
  put_status(out, row, exclusion.has_value());
  if (row) {
    out["exclusion_reason"] = optional_json(row->exclusion_reason);
    out["exclusion_why"] = exclusion ? json(exclusion->why) : json(nullptr);
    out["error_signature"] = optional_json(row->error_signature);
    out["cores"] = optional_json(row->cores);
    out["parallelism"] = optional_json(row->parallelism);
    out["runtime_s"] = optional_json(row->runtime_s);
    out["peak_device_memory_bytes"] = optional_json(row->peak_device_memory_bytes);
    out["ttft_s"] = optional_json(row->ttft_s);
    out["decode_tokens_per_s"] = optional_json(row->decode_tokens_per_s);
  } else {
    out["exclusion_reason"] = exclusion ? json(exclusion->reason) : json(nullptr);
    out["exclusion_why"] = exclusion ? json(exclusion->why) : json(nullptr);
    for (const char* key : {"error_signature", "cores", "parallelism", "runtime_s",
                            "peak_device_memory_bytes", "ttft_s", "decode_tokens_per_s"}) {
      out[key] = nullptr;
    }
  }
  out["predicted"] = row || exclusion ? json(nullptr) : predicted_plan_json(numbers, stack.key());
  return out;
}

json SpaceIndex::predicted_plan_json(const RankedModel* listed,
                                     const dataset::StackKey& stack) const {
  if (!listed) return nullptr;
  const auto weights = listed->weights_bytes();
  const auto topology = inputs_.topologies.find(stack.backend);
  if (!weights || topology == inputs_.topologies.end()) return nullptr;
  const std::string model_type = listed->model_type.value_or("");
  std::optional<stack::ParallelSupport> support;
  if (const auto found = inputs_.parallel_support.find({stack.library_version, model_type});
      found != inputs_.parallel_support.end()) {
    support = found->second;
  }
  const plan::PredictedPlan plan =
      plan::predict_plan(*weights, model_type, support, topology->second);
  return json{{"cores", plan.placed ? json(plan.cores) : json(nullptr)},
              {"parallelism", optional_json(plan.parallelism)},
              {"exclusion", plan.exclusion.empty() ? json(nullptr) : json(plan.exclusion)},
              {"weights_bytes", *weights},
              {"why", plan.why}};
}

namespace {

//! -1, 0 or 1: known values before unknown ones, then ascending (descending when asked).
template <typename T>
int compare_known(const std::optional<T>& a, const std::optional<T>& b, bool descending = false) {
  if (a.has_value() != b.has_value()) return a.has_value() ? -1 : 1;
  if (!a || *a == *b) return 0;
  return (*a < *b) != descending ? -1 : 1;
}

}  // namespace

std::vector<SpaceIndex::ViewEntry> SpaceIndex::tested_entries(const ModelsQuery& query,
                                                              const std::string& task,
                                                              const StackVerdicts* stack) const {
  struct Tested {
    const VerdictRow* row;
    ViewEntry entry;
  };
  std::vector<Tested> tested;
  if (stack) {
    for (const VerdictRow& row : stack->rows()) {
      if (row.task != task) continue;
      ViewEntry entry;
      entry.id = row.model_id;
      entry.id_lower = ascii_lower(row.model_id);
      if (const auto note = notes_.find(row.model_id); note != notes_.end())
        entry.note = note->second;
      tested.push_back({&row, std::move(entry)});
    }
  }
  const auto key = [&](const VerdictRow& a, const VerdictRow& b) {
    switch (query.sort) {
      case TestedSort::kName:
        return 0;
      case TestedSort::kVerdict:
        return a.result == b.result ? 0 : a.result < b.result ? -1 : 1;
      case TestedSort::kCores:
        return compare_known(a.cores, b.cores);
      case TestedSort::kRuntime:
        return compare_known(a.runtime_s, b.runtime_s);
      case TestedSort::kMemory:
        return compare_known(a.peak_device_memory_bytes, b.peak_device_memory_bytes);
      case TestedSort::kDecode:
        return compare_known(a.decode_tokens_per_s, b.decode_tokens_per_s, /*descending=*/true);
    }
    return 0;
  };
  std::sort(tested.begin(), tested.end(), [&](const Tested& a, const Tested& b) {
    if (const int order = key(*a.row, *b.row); order != 0) return order < 0;
    return a.entry.id_lower < b.entry.id_lower;
  });
  std::vector<ViewEntry> entries;
  entries.reserve(tested.size());
  for (Tested& one : tested) {
    one.entry.rank = static_cast<int>(entries.size()) + 1;
    entries.push_back(std::move(one.entry));
  }
  return entries;
}

Result<json> SpaceIndex::compare_json(const std::map<std::string, std::string>& params) const {
  auto stack_named = [&](const char* name) -> Result<const StackVerdicts*> {
    const auto found = params.find(name);
    if (found == params.end() || found->second.empty()) {
      return bad_parameter(name,
                           fmt::format("{} is required: a stack, as its file name's stem", name));
    }
    std::vector<std::string> known;
    for (const StackVerdicts* stack : stacks_) {
      if (stack->key().stem() == found->second) return stack;
      known.push_back(stack->key().stem());
    }
    return bad_parameter(name, fmt::format("{} {} is not a stack of the dataset; known: {}", name,
                                           quote_for_message(found->second), known_list(known)));
  };
  CANRUN_ASSIGN_OR_RETURN(const StackVerdicts* a, stack_named("a"));
  CANRUN_ASSIGN_OR_RETURN(const StackVerdicts* b, stack_named("b"));
  std::string task;
  if (const auto found = params.find("task"); found != params.end()) task = found->second;
  if (!task.empty() && std::find(tasks_.begin(), tasks_.end(), task) == tasks_.end()) {
    return bad_parameter("task", fmt::format("task {} is not known; known: {}",
                                             quote_for_message(task), known_list(tasks_)));
  }
  dataset::DiffOptions options;
  options.task = task;
  json out = dataset::diff_json(dataset::diff_stacks(a->rows(), b->rows(), options));
  out["a"] = stack_json(a->key());
  out["b"] = stack_json(b->key());
  out["task"] = task.empty() ? json(nullptr) : json(task);
  return out;
}

Result<json> SpaceIndex::causes_json(const std::map<std::string, std::string>& params) const {
  CANRUN_ASSIGN_OR_RETURN(const StackVerdicts* stack, resolve_stack(params));
  json causes = json::array();
  std::size_t failures = 0;
  if (stack) {
    for (const dataset::FailureCause& cause : dataset::failure_causes(stack->rows())) {
      failures += cause.count;
      json results = json::array();
      for (const auto& [result, count] : cause.results) {
        const auto parsed = parse_verdict_result(result);
        results.push_back({{"result", result},
                           {"count", count},
                           {"status_class", parsed ? display_class(*parsed) : kUntestedClass}});
      }
      causes.push_back({{"signature", cause.signature},
                        {"count", cause.count},
                        {"results", std::move(results)},
                        {"excerpt", cause.excerpt},
                        {"models", cause.models}});
    }
  }
  return json{{"stack", stack ? stack_json(stack->key()) : json(nullptr)},
              {"failures", failures},
              {"causes", std::move(causes)}};
}

Result<json> SpaceIndex::models_json(const ModelsQuery& query) const {
  std::string task = query.task;
  if (task.empty()) {
    if (tasks_.empty()) {
      return json{{"view", view_name(query.view)},
                  {"task", nullptr},
                  {"search", query.search},
                  {"stack", nullptr},
                  {"total", 0},
                  {"offset", query.offset},
                  {"limit", query.limit},
                  {"models", json::array()}};
    }
    task = tasks_.front();
  } else if (std::find(tasks_.begin(), tasks_.end(), task) == tasks_.end()) {
    return bad_parameter("task", fmt::format("task {} is not known; known: {}",
                                             quote_for_message(task), known_list(tasks_)));
  }
  CANRUN_ASSIGN_OR_RETURN(
      const StackVerdicts* stack,
      resolve_stack(query.backend, query.compiler_version, query.library_version));
  static const std::vector<ViewEntry> kNoEntries;
  std::vector<ViewEntry> tested;
  if (query.view == View::kTested) tested = tested_entries(query, task, stack);
  const auto found = views_.find({task, query.view});
  const auto& entries = query.view == View::kTested ? tested
                        : found == views_.end()     ? kNoEntries
                                                    : found->second;
  const std::string needle = ascii_lower(query.search);
  json models = json::array();
  std::size_t total = 0;
  static const StackVerdicts kEmptyStack({}, {});
  for (const ViewEntry& entry : entries) {
    if (!needle.empty() && entry.id_lower.find(needle) == std::string::npos) continue;
    if (total >= query.offset && total - query.offset < query.limit) {
      models.push_back(entry_json(entry, task, stack ? *stack : kEmptyStack));
    }
    ++total;
  }
  return json{{"view", view_name(query.view)},
              {"task", task},
              {"search", query.search},
              {"sort", query.view == View::kTested ? json(sort_name(query.sort)) : json(nullptr)},
              {"stack", stack ? stack_json(stack->key()) : json(nullptr)},
              {"total", total},
              {"offset", query.offset},
              {"limit", query.limit},
              {"models", std::move(models)}};
}

namespace {

namespace fs = std::filesystem;

//! The kept log of a failure row, if one was kept: its path under the dataset folder.
std::optional<fs::path> kept_log(const fs::path& root, const VerdictRow& row) {
  if (root.empty() || row.result == VerdictResult::kPass ||
      row.result == VerdictResult::kExcluded) {
    return std::nullopt;
  }
  auto relative = dataset::log_relative_path(row);
  if (!relative.ok()) return std::nullopt;
  std::error_code error;
  if (!fs::is_regular_file(root / *relative, error)) return std::nullopt;
  return root / *relative;
}

//! The output images of a row that are kept beside the dataset: role → path under the folder.
std::map<std::string, fs::path> kept_images(const fs::path& root, const VerdictRow& row) {
  std::map<std::string, fs::path> out;
  if (root.empty() || !row.output_files) return out;
  const auto named = json::parse(*row.output_files, nullptr, false);
  if (!named.is_object()) return out;
  for (const std::string_view role : {dataset::kImageRole, dataset::kReferenceImageRole}) {
    auto relative = dataset::image_relative_path(row, role);  // never a path the row wrote
    std::error_code error;
    if (named.contains(role) && relative.ok() && fs::is_regular_file(root / *relative, error)) {
      out.emplace(role, root / *relative);
    }
  }
  return out;
}

}  // namespace

Result<std::string> SpaceIndex::image_bytes(
    const ModelId& id, const std::map<std::string, std::string>& params) const {
  const auto param = [&](const char* name) { return param_of(params, name); };
  CANRUN_ASSIGN_OR_RETURN(const StackVerdicts* stack, resolve_stack(params));
  const VerdictRow* row = stack ? stack->find(id.str(), param("task")) : nullptr;
  const auto images =
      row ? kept_images(inputs_.dataset_root, *row) : std::map<std::string, fs::path>();
  const auto found = images.find(param("role"));
  if (found == images.end()) {
    return not_found(fmt::format("no {} kept for {} ({}) on this stack",
                                 param("role").empty() ? "image role given" : param("role"),
                                 id.str(), param("task").empty() ? "no task given" : param("task")))
        .with_reason(reason::kNotFound);
  }
  auto bytes = read_file(found->second);
  if (!bytes.ok()) return bytes.error().with_reason(reason::kNotFound);
  return std::move(*bytes);
}

Result<const StackVerdicts*> SpaceIndex::resolve_stack(
    const std::map<std::string, std::string>& params) const {
  return resolve_stack(param_of(params, "backend"), param_of(params, "compiler_version"),
                       param_of(params, "library_version"));
}

Result<std::string> SpaceIndex::log_text(const ModelId& id,
                                         const std::map<std::string, std::string>& params) const {
  const auto param = [&](const char* name) { return param_of(params, name); };
  CANRUN_ASSIGN_OR_RETURN(const StackVerdicts* stack, resolve_stack(params));
  const VerdictRow* row = stack ? stack->find(id.str(), param("task")) : nullptr;
  const auto path = row ? kept_log(inputs_.dataset_root, *row) : std::nullopt;
  if (!path) {
    return not_found(fmt::format("no log kept for {} ({}) on this stack: logs are kept for "
                                 "failures only",
                                 id.str(), param("task").empty() ? "no task given" : param("task")))
        .with_reason(reason::kNotFound);
  }
  auto text = read_file(*path);
  if (!text.ok()) return text.error().with_reason(reason::kNotFound);
  return std::move(*text);
}

Result<json> SpaceIndex::model_json(const ModelId& id,
                                    const std::map<std::string, std::string>& params) const {
  const auto param = [&](const char* name) { return param_of(params, name); };
  CANRUN_ASSIGN_OR_RETURN(const StackVerdicts* stack, resolve_stack(params));

  // Every task the model appears in: a row on any stack, a ranking or the curated list.
  std::vector<std::string> model_tasks;
  for (const std::string& task : tasks_) {
    bool present = false;
    for (const StackVerdicts* candidate : stacks_) {
      if (candidate->find(id.str(), task)) {
        present = true;
        break;
      }
    }
    for (View view : {View::kSelected, View::kTrending, View::kDownloads}) {
      if (present) break;
      const auto found = views_.find({task, view});
      if (found == views_.end()) continue;
      present = std::any_of(found->second.begin(), found->second.end(),
                            [&](const ViewEntry& entry) { return entry.id == id.str(); });
    }
    if (present) model_tasks.push_back(task);
  }
  if (model_tasks.empty()) {
    return not_found(fmt::format("model {} is not in the dataset, the rankings or the curated list",
                                 quote_for_message(id.str())))
        .with_reason(reason::kNotFound);
  }
  std::string task = param("task");
  if (task.empty()) {
    task = model_tasks.front();
    for (const std::string& candidate : model_tasks) {
      if (stack && stack->find(id.str(), candidate)) {
        task = candidate;
        break;
      }
    }
  } else if (std::find(model_tasks.begin(), model_tasks.end(), task) == model_tasks.end()) {
    return bad_parameter("task",
                         fmt::format("model {} has nothing for task {}; it has: {}", id.str(),
                                     quote_for_message(task), known_list(model_tasks)));
  }

  json rankings = json::array();
  for (View view : {View::kSelected, View::kTrending, View::kDownloads}) {
    const auto found = views_.find({task, view});
    if (found == views_.end()) continue;
    for (const ViewEntry& entry : found->second) {
      if (entry.id != id.str()) continue;
      rankings.push_back({{"view", view_name(view)}, {"rank", entry.rank}});
      break;
    }
  }
  const RankedModel* numbers = nullptr;
  for (View view : {View::kDownloads, View::kTrending}) {
    const auto found = views_.find({task, view});
    if (numbers || found == views_.end()) continue;
    for (const ViewEntry& entry : found->second) {
      if (entry.id == id.str()) {
        numbers = entry.downloads ? entry.downloads : entry.trending;
        break;
      }
    }
  }
  const auto exclusion = exclusion_of(id.str());
  const auto note = notes_.find(id.str());
  const VerdictRow* row = stack ? stack->find(id.str(), task) : nullptr;

  json out = {{"id", id.str()},
              {"task", task},
              {"tasks", model_tasks},
              {"stack", stack ? stack_json(stack->key()) : json(nullptr)},
              {"note", note == notes_.end() ? json(nullptr) : json(note->second)},
              {"exclusion", exclusion ? json{{"reason", exclusion->reason}, {"why", exclusion->why}}
                                      : json(nullptr)},
              {"rankings", rankings},
              {"downloads", numbers ? json(numbers->downloads) : json(nullptr)},
              {"likes", numbers ? json(numbers->likes) : json(nullptr)},
              {"verdict", row ? dataset::row_to_json(*row) : json(nullptr)},
              {"run_command", "python3 run.py"}};
  std::optional<std::string> prefetch;
  if (stack) {
    prefetch = prefetch_command(stack->key().backend,
                                row ? row->compiler_version : stack->key().compiler_version);
  }
  put_status(out, row, exclusion.has_value());
  out["predicted"] =
      row || exclusion || !stack ? json(nullptr) : predicted_plan_json(numbers, stack->key());
  out["prefetch_command"] = prefetch ? json(*prefetch) : json(nullptr);
  // The failure's full log, when one was kept beside the dataset.
  out["log_url"] = nullptr;
  if (row && kept_log(inputs_.dataset_root, *row)) {
    out["log_url"] = fmt::format(
        "/api/log/{}?backend={}&compiler_version={}&library_version={}&task={}", id.str(),
        percent_encode(stack->key().backend), percent_encode(stack->key().compiler_version),
        percent_encode(stack->key().library_version), percent_encode(task));
  }
  if (!prefetch) out["prefetch_note"] = "no public cache for this backend";
  // The task's output images (text-to-image: the backend's beside the CPU reference's).
  out["images"] = nullptr;
  if (row) {
    json images = json::object();
    for (const auto& [role, path] : kept_images(inputs_.dataset_root, *row)) {
      images[role] = fmt::format(
          "/api/image/{}?backend={}&compiler_version={}&library_version={}&task={}&role={}",
          id.str(), percent_encode(stack->key().backend),
          percent_encode(stack->key().compiler_version),
          percent_encode(stack->key().library_version), percent_encode(task), role);
    }
    if (!images.empty()) out["images"] = std::move(images);
  }

  // History on this backend, newest first. Each row is compared with the nearest older row by
  // the one regression rule (core/verdict_result.h).
  json history = json::array();
  if (stack) {
    std::vector<const StackVerdicts*> same_backend;
    for (const StackVerdicts* candidate : stacks_) {
      if (candidate->key().backend == stack->key().backend) same_backend.push_back(candidate);
    }
    for (std::size_t idx = 0; idx < same_backend.size(); ++idx) {
      const StackVerdicts* at = same_backend[idx];
      const VerdictRow* at_row = at->find(id.str(), task);
      const VerdictRow* older_row = nullptr;
      for (std::size_t older = idx + 1; older < same_backend.size() && !older_row; ++older) {
        older_row = same_backend[older]->find(id.str(), task);
      }
      json item = stack_json(at->key());
      item["current"] = at == stack;
      put_status(item, at_row, false);
      item["cores"] = at_row ? optional_json(at_row->cores) : json(nullptr);
      item["runtime_s"] = at_row ? optional_json(at_row->runtime_s) : json(nullptr);
      item["peak_device_memory_bytes"] =
          at_row ? optional_json(at_row->peak_device_memory_bytes) : json(nullptr);
      item["error_signature"] = at_row ? optional_json(at_row->error_signature) : json(nullptr);
      item["started_at"] =
          at_row ? json(dataset::format_timestamp(at_row->started_at)) : json(nullptr);
      const bool compared = at_row && older_row;
      item["regression"] =
          compared && is_regression(dataset::outcome_of(*older_row), dataset::outcome_of(*at_row));
      item["fixed"] =
          compared && is_fix(dataset::outcome_of(*older_row), dataset::outcome_of(*at_row));
      item["unverified"] =
          compared && is_unverified(dataset::outcome_of(*older_row), dataset::outcome_of(*at_row));
      history.push_back(std::move(item));
    }
  }
  out["history"] = std::move(history);

  // Side by side: the latest verdict on every backend (its newest stack with a row).
  json across = json::array();
  for (const std::string& backend : backends_) {
    for (const StackVerdicts* candidate : stacks_) {  // newest first within a backend
      if (candidate->key().backend != backend) continue;
      const VerdictRow* found = candidate->find(id.str(), task);
      if (!found) continue;
      json item = stack_json(candidate->key());
      put_status(item, found, false);
      item["cores"] = optional_json(found->cores);
      item["parallelism"] = optional_json(found->parallelism);
      item["runtime_s"] = optional_json(found->runtime_s);
      item["peak_device_memory_bytes"] = optional_json(found->peak_device_memory_bytes);
      item["decode_tokens_per_s"] = optional_json(found->decode_tokens_per_s);
      item["ttft_s"] = optional_json(found->ttft_s);
      across.push_back(std::move(item));
      break;
    }
  }
  out["backends"] = std::move(across);
  return out;
}

}  // namespace canrun::serve
