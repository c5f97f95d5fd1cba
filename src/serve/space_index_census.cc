// The SpaceIndex's answers from the architecture census served beside the dataset: the
// Architectures view (/api/architectures: one entry per model type of a census stack and task)
// and the census line of an untested model (its listed type's entry on the same stack). A census
// verdict is evidence about the architecture (a tiny random-weight checkpoint of the type), never
// a model's verdict: every answer says so.
#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <tuple>

#include "census/census_ids.h"
#include "core/json_output.h"
#include "core/text.h"
#include "serve/answer_json.h"
#include "serve/space_index.h"
#include "task/task.h"

namespace canrun::serve {
namespace {

using dataset::VerdictRow;
using nlohmann::json;

bool is_sharded_id(std::string_view model_id) {
  return model_id.starts_with(census::kShardedOrg) &&
         model_id.substr(census::kShardedOrg.size()).starts_with('/');
}

//! "tensor parallel" for tp, "expert parallel" for ep, else the column's own word.
std::string parallelism_words(const std::optional<std::string>& parallelism) {
  if (!parallelism) return "sharded";
  if (*parallelism == "tp") return "tensor parallel";
  if (*parallelism == "ep") return "expert parallel";
  return *parallelism;
}

json verdict_json(const VerdictRow& row) {
  json out = {{"model_id", row.model_id}};
  put_status(out, &row, false);
  out["cores"] = optional_json(row.cores);
  out["parallelism"] = optional_json(row.parallelism);
  out["error_signature"] = optional_json(row.error_signature);
  out["exclusion_reason"] = optional_json(row.exclusion_reason);
  out["near_tie"] = optional_json(row.near_tie);
  return out;
}

//! "PASS on 1 core", "FAIL_COMPILE on 1 core", "EXCLUDED (build_failed)".
std::string one_core_words(const VerdictRow& row) {
  if (row.result == VerdictResult::kExcluded) {
    return fmt::format("EXCLUDED ({})", row.exclusion_reason.value_or("no reason"));
  }
  const int cores = row.cores.value_or(1);
  return fmt::format("{} on {} core{}", to_string(row.result), cores, cores == 1 ? "" : "s");
}

//! "PASS tensor parallel", "FAIL_COMPILE tensor parallel", "no parallel plan".
std::string sharded_words(const VerdictRow& row) {
  if (row.result == VerdictResult::kExcluded) {
    return row.exclusion_reason == "no_parallel_plan"
               ? std::string("no parallel plan")
               : fmt::format("EXCLUDED sharded ({})", row.exclusion_reason.value_or("no reason"));
  }
  return fmt::format("{} {}", to_string(row.result), parallelism_words(row.parallelism));
}

//! -1, 0, 1: PASS first, then by failure kind, then no row.
int compare_rows(const VerdictRow* a, const VerdictRow* b) {
  if ((a == nullptr) != (b == nullptr)) return a ? -1 : 1;
  if (!a || a->result == b->result) return 0;
  return a->result < b->result ? -1 : 1;
}

}  // namespace

std::vector<std::string> SpaceIndex::census_tasks(const std::string& stem) const {
  std::vector<std::string> tasks;
  for (std::string& task : task::task_names()) {
    if (census_types_.contains({stem, task})) tasks.push_back(std::move(task));
  }
  return tasks;
}

void SpaceIndex::build_census() {
  for (const StackVerdicts* stack : census_.stacks) {
    const std::string stem = stack->key().stem();
    for (const VerdictRow& row : stack->rows()) {
      if (!row.model_type) continue;
      CensusType& type = census_types_[{stem, row.task}][*row.model_type];
      (is_sharded_id(row.model_id) ? type.sharded : type.one_core) = &row;
    }
  }
  // A model listed by both sorts of a task counts once.
  std::map<std::pair<std::string, std::string>, std::string> type_of;  // (task, id) → type
  for (const RankingSnapshot& snapshot : inputs_.rankings) {
    for (const RankedModel& model : snapshot.models) {
      if (model.model_type) type_of.emplace(std::pair(snapshot.task, model.id), *model.model_type);
    }
  }
  for (const auto& [task_and_id, type] : type_of) ++ranked_types_[{task_and_id.first, type}];
}

const SpaceIndex::CensusType* SpaceIndex::census_type(const dataset::StackKey& stack,
                                                      const std::string& task,
                                                      const std::string& model_type) const {
  const auto types = census_types_.find({stack.stem(), task});
  if (types == census_types_.end()) return nullptr;
  const auto found = types->second.find(model_type);
  return found == types->second.end() || !found->second.one_core ? nullptr : &found->second;
}

json SpaceIndex::census_entry_json(const std::string& model_type, const CensusType& rows,
                                   const std::string& task) const {
  const VerdictRow& one = *rows.one_core;
  std::string text = fmt::format("architecture {}: {}", model_type, one_core_words(one));
  if (rows.sharded) text += ", " + sharded_words(*rows.sharded);
  text += " (census, random weights)";
  // The cause: the one-core failure's, else the sharded run's.
  const VerdictRow* failed = one.result != VerdictResult::kPass ? &one : rows.sharded;
  json cause = nullptr;
  if (failed && failed->result != VerdictResult::kPass) {
    cause = failed->result == VerdictResult::kExcluded ? optional_json(failed->exclusion_reason)
                                                       : optional_json(failed->error_signature);
  }
  const auto ranked = ranked_types_.find({task, model_type});
  return {{"model_type", model_type},
          {"one_core", verdict_json(one)},
          {"sharded", rows.sharded ? verdict_json(*rows.sharded) : json(nullptr)},
          {"cause", cause},
          {"claims",
           {{"fullgraph", optional_json(one.claims_fullgraph)},
            {"tp_plan", optional_json(one.claims_tp_plan)},
            {"ep_plan", optional_json(one.claims_ep_plan)}}},
          {"ranked_models", ranked == ranked_types_.end() ? 0 : ranked->second},
          {"text", std::move(text)}};
}

json SpaceIndex::census_line_json(const std::optional<std::string>& model_type,
                                  const std::string& task, const StackVerdicts* stack) const {
  if (!model_type || !stack) return nullptr;
  const CensusType* rows = census_type(stack->key(), task, *model_type);
  if (!rows) return nullptr;
  json line = census_entry_json(*model_type, *rows, task);
  line["stack"] = stack_json(stack->key());
  line["task"] = task;
  return line;
}

Result<json> SpaceIndex::architectures_json(const QueryParams& params) const {
  const std::string stem = param_of(params, "stack");
  std::string task = param_of(params, "task");
  const std::string search = param_of(params, "q");
  if (search.size() > 200) return bad_parameters("q is longer than 200 characters", {"q"});
  ArchitectureSort sort = ArchitectureSort::kType;
  if (const std::string sort_text = param_of(params, "sort"); !sort_text.empty()) {
    const auto parsed = parse_architecture_sort(sort_text);
    if (!parsed) {
      return bad_parameters(fmt::format("sort {} is not one of type, one_core, sharded, ranked",
                                        quote_for_message(sort_text)),
                            {"sort"});
    }
    sort = *parsed;
  }
  std::vector<std::string> stems;
  for (const StackVerdicts* stack : census_.stacks) stems.push_back(stack->key().stem());
  const StackVerdicts* stack = nullptr;
  if (!stem.empty()) {
    const auto found = std::find(stems.begin(), stems.end(), stem);
    if (found == stems.end()) {
      return bad_parameters(
          fmt::format(
              "stack {} has no census; census stacks: {}", quote_for_message(stem),
              stems.empty() ? std::string("none (serve --census DATASET)") : known_list(stems)),
          {"stack"});
    }
    stack = census_.stacks[static_cast<std::size_t>(found - stems.begin())];
  } else if (!census_.stacks.empty()) {
    // The census of the Space's default stack, else the newest.
    stack = census_.stacks.front();
    if (auto chosen = resolve_stack(params); chosen.ok() && *chosen) {
      const auto same = std::find(stems.begin(), stems.end(), (*chosen)->key().stem());
      if (same != stems.end())
        stack = census_.stacks[static_cast<std::size_t>(same - stems.begin())];
    }
  }
  const std::vector<std::string> tasks =
      stack ? census_tasks(stack->key().stem()) : std::vector<std::string>();
  if (!task.empty() && std::find(tasks.begin(), tasks.end(), task) == tasks.end()) {
    return bad_parameters(
        fmt::format("task {} has no census on this stack; its tasks: {}", quote_for_message(task),
                    tasks.empty() ? std::string("none") : known_list(tasks)),
        {"task"});
  }
  if (task.empty() && !tasks.empty()) task = tasks.front();

  struct Type {
    const std::string* name;
    const CensusType* rows;
    std::size_t ranked;
  };
  std::vector<Type> types;
  const std::string needle = ascii_lower(search);
  if (stack && !task.empty()) {
    for (const auto& [name, rows] : census_types_.at({stack->key().stem(), task})) {
      if (!rows.one_core) continue;
      if (!needle.empty() && ascii_lower(name).find(needle) == std::string::npos) continue;
      const auto ranked = ranked_types_.find({task, name});
      types.push_back({&name, &rows, ranked == ranked_types_.end() ? 0 : ranked->second});
    }
  }
  const auto order = [&](const Type& a, const Type& b) {
    switch (sort) {
      case ArchitectureSort::kType:
        return 0;
      case ArchitectureSort::kOneCore:
        return compare_rows(a.rows->one_core, b.rows->one_core);
      case ArchitectureSort::kSharded:
        return compare_rows(a.rows->sharded, b.rows->sharded);
      case ArchitectureSort::kRanked:
        return a.ranked == b.ranked ? 0 : a.ranked > b.ranked ? -1 : 1;
    }
    return 0;
  };
  std::stable_sort(types.begin(), types.end(), [&](const Type& a, const Type& b) {
    if (const int first = order(a, b); first != 0) return first < 0;
    return *a.name < *b.name;
  });

  // Counts per verdict (sharded: per verdict and parallelism, or exclusion reason), in the
  // order of the results.
  using CountKey = std::tuple<VerdictResult, std::string, std::string>;  // result, par., reason
  std::map<CountKey, std::size_t> one_core_counts;
  std::map<CountKey, std::size_t> sharded_counts;
  const auto key_of = [](const VerdictRow& row, bool sharded) {
    return CountKey{row.result, sharded ? row.parallelism.value_or("") : "",
                    row.exclusion_reason.value_or("")};
  };
  json entries = json::array();
  for (const Type& type : types) {
    ++one_core_counts[key_of(*type.rows->one_core, false)];
    if (const VerdictRow* sharded = type.rows->sharded) ++sharded_counts[key_of(*sharded, true)];
    entries.push_back(census_entry_json(*type.name, *type.rows, task));
  }
  const auto counts_json = [](const std::map<CountKey, std::size_t>& counts) {
    json out = json::array();
    for (const auto& [key, count] : counts) {
      const auto& [result, parallelism, reason] = key;
      out.push_back({{"status", to_string(result)},
                     {"status_class", display_class(result)},
                     {"parallelism", parallelism.empty() ? json(nullptr) : json(parallelism)},
                     {"exclusion_reason", reason.empty() ? json(nullptr) : json(reason)},
                     {"count", count}});
    }
    return out;
  };
  json out = {
      {"stack", stack ? stack_json(stack->key()) : json(nullptr)},
      {"task", task.empty() ? json(nullptr) : json(task)},
      {"tasks", tasks},
      {"stacks", stems},
      {"search", search},
      {"sort", architecture_sort_name(sort)},
      {"total", entries.size()},
      {"counts",
       {{"one_core", counts_json(one_core_counts)}, {"sharded", counts_json(sharded_counts)}}},
      {"architectures", std::move(entries)}};
  return out;
}

}  // namespace canrun::serve
