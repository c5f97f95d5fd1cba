// The SpaceIndex's list answers: /api/versions (the stacks and tasks), /api/models (a view of
// a task on a stack: Selected, Trending, Downloads or Tested), /api/causes (a stack's failures
// by cause) and /api/compare (two stacks by the regression rule).
#include <fmt/format.h>

#include <algorithm>

#include "core/json_output.h"
#include "core/text.h"
#include "dataset/causes.h"
#include "dataset/diff.h"
#include "dataset/perf_summary.h"
#include "plan/predict.h"
#include "serve/answer_json.h"
#include "serve/space_index.h"
#include "task/task.h"

namespace canrun::serve {
namespace {

using dataset::VerdictRow;
using nlohmann::json;

// The API's names of the views and sorts, in the order the API lists them.
constexpr std::pair<View, std::string_view> kViewNames[] = {{View::kSelected, "selected"},
                                                            {View::kTrending, "trending"},
                                                            {View::kDownloads, "downloads"},
                                                            {View::kTested, "tested"}};
constexpr std::pair<TestedSort, std::string_view> kSortNames[] = {
    {TestedSort::kName, "name"},      {TestedSort::kVerdict, "verdict"},
    {TestedSort::kCores, "cores"},    {TestedSort::kRuntime, "runtime"},
    {TestedSort::kMemory, "memory"},  {TestedSort::kDecode, "decode"},
    {TestedSort::kSpeedup, "speedup"}};
constexpr std::pair<ArchitectureSort, std::string_view> kArchitectureSorts[] = {
    {ArchitectureSort::kType, "type"},
    {ArchitectureSort::kOneCore, "one_core"},
    {ArchitectureSort::kSharded, "sharded"},
    {ArchitectureSort::kRanked, "ranked"}};

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

//! -1, 0 or 1: known values before unknown ones, then ascending (descending when asked).
template <typename T>
int compare_known(const std::optional<T>& a, const std::optional<T>& b, bool descending = false) {
  if (a.has_value() != b.has_value()) return a.has_value() ? -1 : 1;
  if (!a || *a == *b) return 0;
  return (*a < *b) != descending ? -1 : 1;
}

//! What the page needs to know of each registered task, in the registry's order, so a new task
//! needs no change to the page.
//! The registry's facts the page needs, made once: the registry is fixed in the binary.
const json& task_details_json() {
  static const json details = [] {
    json out = json::array();
    for (const task::TaskSpec& spec : task::tasks()) {
      out.push_back({{"name", spec.name},
                     {"library", spec.library},
                     {"comparison", task::to_string(spec.comparison)},
                     {"display", task::to_string(spec.display)},
                     {"generates_text", task::generates_text(spec)},
                     {"speed_meaning", task::speed_meaning(spec)}});
    }
    return out;
  }();
  return details;
}

}  // namespace

std::string_view view_name(View view) { return name_in(kViewNames, view); }
std::optional<View> parse_view(std::string_view text) { return parse_in(kViewNames, text); }
std::string_view sort_name(TestedSort sort) { return name_in(kSortNames, sort); }
std::optional<TestedSort> parse_sort(std::string_view text) { return parse_in(kSortNames, text); }
std::string_view architecture_sort_name(ArchitectureSort sort) {
  return name_in(kArchitectureSorts, sort);
}
std::optional<ArchitectureSort> parse_architecture_sort(std::string_view text) {
  return parse_in(kArchitectureSorts, text);
}

json SpaceIndex::versions_json() const {
  json backends = json::array();
  json stacks = json::array();
  for (const std::string& backend : results_.backends) {
    json entry = {{"name", backend}, {"stacks", json::array()}};
    for (const StackVerdicts* stack : results_.stacks) {
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
  if (!results_.backends.empty()) {
    for (const StackVerdicts* stack : results_.stacks) {
      if (stack->key().backend == results_.backends.front()) {
        defaults = stack_json(stack->key());
        break;
      }
    }
  }
  // The census's stacks (the Architectures view), each with the tasks it covers.
  json census = json::array();
  for (const StackVerdicts* stack : census_.stacks) {
    json item = stack_json(stack->key());
    item["rows"] = stack->rows().size();
    item["tasks"] = census_tasks(stack->key().stem());
    census.push_back(std::move(item));
  }
  return {{"backends", backends},
          {"stacks", stacks},
          {"census", std::move(census)},
          {"tasks", tasks_},
          {"task_details", task_details_json()},
          {"views", {"selected", "trending", "downloads", "tested"}},
          {"default", defaults}};
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
    out["speedup"] = optional_json(row->speedup);
    out["compile_s"] = optional_json(row->compile_s);
    out["memory_ratio"] = optional_json(row->memory_ratio);
    out["long_agreement"] = optional_json(row->long_agreement);
    out["drifts_after"] = optional_json(row->drifts_after);
  } else {
    out["exclusion_reason"] = exclusion ? json(exclusion->reason) : json(nullptr);
    out["exclusion_why"] = exclusion ? json(exclusion->why) : json(nullptr);
    for (const char* key : {"error_signature", "cores", "parallelism", "runtime_s",
                            "peak_device_memory_bytes", "ttft_s", "decode_tokens_per_s", "speedup",
                            "compile_s", "memory_ratio", "long_agreement", "drifts_after"}) {
      out[key] = nullptr;
    }
  }
  out["predicted"] = row || exclusion ? json(nullptr) : predicted_plan_json(numbers, stack.key());
  out["census"] = row || exclusion ? json(nullptr)
                                   : census_line_json(numbers ? numbers->model_type : std::nullopt,
                                                      task, &stack);
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
  return json{
      {"cores", plan.placed ? json(plan.cores) : json(nullptr)},
      {"parallelism", plan.parallelism ? json(to_string(*plan.parallelism)) : json(nullptr)},
      {"exclusion", plan.exclusion.empty() ? json(nullptr) : json(plan.exclusion)},
      {"weights_bytes", *weights},
      {"why", plan.why}};
}

const json& SpaceIndex::perf_summary_of(const StackVerdicts* stack, const std::string& task) const {
  static const json kNothing = dataset::perf_summary_json(dataset::summarize_perf({}));
  if (!stack) return kNothing;
  const auto found = perf_summaries_.find({stack->key().stem(), task});
  return found == perf_summaries_.end() ? kNothing : found->second;
}

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
      case TestedSort::kSpeedup:
        return compare_known(a.speedup, b.speedup, /*descending=*/true);
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

Result<json> SpaceIndex::compare_json(const QueryParams& params) const {
  auto stack_named = [&](const char* name) -> Result<const StackVerdicts*> {
    const auto found = params.find(name);
    if (found == params.end() || found->second.empty()) {
      return bad_parameters(fmt::format("{} is required: a stack, as its file name's stem", name),
                            {name});
    }
    std::vector<std::string> known;
    for (const StackVerdicts* stack : results_.stacks) {
      if (stack->key().stem() == found->second) return stack;
      known.push_back(stack->key().stem());
    }
    return bad_parameters(fmt::format("{} {} is not a stack of the dataset; known: {}", name,
                                      quote_for_message(found->second), known_list(known)),
                          {name});
  };
  CANRUN_ASSIGN_OR_RETURN(const StackVerdicts* a, stack_named("a"));
  CANRUN_ASSIGN_OR_RETURN(const StackVerdicts* b, stack_named("b"));
  std::string task;
  if (const auto found = params.find("task"); found != params.end()) task = found->second;
  if (!task.empty() && std::find(tasks_.begin(), tasks_.end(), task) == tasks_.end()) {
    return bad_parameters(
        fmt::format("task {} is not known; known: {}", quote_for_message(task), known_list(tasks_)),
        {"task"});
  }
  dataset::DiffOptions options;
  options.task = task;
  json out = dataset::diff_json(dataset::diff_stacks(a->rows(), b->rows(), options));
  out["a"] = stack_json(a->key());
  out["b"] = stack_json(b->key());
  out["task"] = task.empty() ? json(nullptr) : json(task);
  return out;
}

Result<json> SpaceIndex::causes_json(const QueryParams& params) const {
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
                        {"models", cause.models},
                        {"model_types", cause.model_types}});
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
                  {"summary", perf_summary_of(nullptr, "")},
                  {"models", json::array()}};
    }
    task = tasks_.front();
  } else if (std::find(tasks_.begin(), tasks_.end(), task) == tasks_.end()) {
    return bad_parameters(
        fmt::format("task {} is not known; known: {}", quote_for_message(task), known_list(tasks_)),
        {"task"});
  }
  CANRUN_ASSIGN_OR_RETURN(
      const StackVerdicts* stack,
      resolve_stack(results_, query.backend, query.compiler_version, query.library_version));
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
              {"summary", perf_summary_of(stack, task)},
              {"models", std::move(models)}};
}

}  // namespace canrun::serve
