#include "dataset/diff.h"

#include <cmath>
#include <map>

#include "core/json_output.h"

namespace canrun::dataset {
namespace {

using RowKey = std::pair<std::string, std::string>;  // (model_id, task)

std::map<RowKey, const VerdictRow*> rows_by_key(const std::vector<VerdictRow>& rows,
                                                std::string_view task) {
  std::map<RowKey, const VerdictRow*> by_key;
  for (const VerdictRow& row : rows) {
    if (task.empty() || row.task == task) by_key[{row.model_id, row.task}] = &row;
  }
  return by_key;
}

bool tested(const VerdictRow* row) { return row && row->result != VerdictResult::kExcluded; }

VerdictChange change_of(const RowKey& key, const VerdictRow* from, const VerdictRow* to) {
  VerdictChange change{key.first, key.second, {}, {}, {}, {}};
  if (from) {
    change.from_result = from->result;
    change.from_exclusion_reason = from->exclusion_reason;
  }
  if (to) {
    change.to_result = to->result;
    change.to_exclusion_reason = to->exclusion_reason;
  }
  return change;
}

MeasureChange measure_change_of(const RowKey& key, const VerdictRow& from, const VerdictRow& to) {
  return {key.first,
          key.second,
          from.cores,
          to.cores,
          from.parallelism,
          to.parallelism,
          from.runtime_s,
          to.runtime_s,
          from.peak_device_memory_bytes,
          to.peak_device_memory_bytes,
          from.speedup,
          to.speedup,
          from.compile_s,
          to.compile_s};
}

//! Whether `to` differs from `from` by at least `relative` of `from` and at least `minimum`.
template <typename T>
bool beyond(const std::optional<T>& from, const std::optional<T>& to, double relative,
            double minimum) {
  if (!from || !to || *from <= 0) return false;
  const double change = std::abs(static_cast<double>(*to) - static_cast<double>(*from));
  return change >= relative * static_cast<double>(*from) && change >= minimum;
}

}  // namespace

StackDiff diff_stacks(const std::vector<VerdictRow>& from, const std::vector<VerdictRow>& to,
                      const DiffOptions& options) {
  const auto from_rows = rows_by_key(from, options.task);
  const auto to_rows = rows_by_key(to, options.task);
  std::map<RowKey, std::pair<const VerdictRow*, const VerdictRow*>> all;
  for (const auto& [key, row] : from_rows) all[key].first = row;
  for (const auto& [key, row] : to_rows) all[key].second = row;

  StackDiff diff;
  for (const auto& [key, rows] : all) {
    const auto [from_row, to_row] = rows;
    std::vector<VerdictChange>* list = nullptr;
    if (from_row && to_row) {
      const VerdictOutcome was = outcome_of(*from_row);
      const VerdictOutcome is = outcome_of(*to_row);
      if (is_regression(was, is)) {
        list = &diff.regressions;
      } else if (is_fix(was, is)) {
        list = &diff.fixes;
      } else if (is_unverified(was, is)) {
        list = &diff.unverified;
      } else if (was.result == is.result) {
        list = nullptr;
      } else if (!tested(from_row) && tested(to_row)) {
        list = &diff.newly_tested;
      } else if (tested(from_row) && !tested(to_row)) {
        list = &diff.no_longer_tested;
      } else {
        list = &diff.other_changes;
      }
    } else if (tested(from_row)) {
      list = &diff.no_longer_tested;
    } else if (tested(to_row)) {
      list = &diff.newly_tested;
    }
    if (list) {
      list->push_back(change_of(key, from_row, to_row));
    } else {
      ++diff.unchanged;
    }
    if (!tested(from_row) || !tested(to_row)) continue;
    if (from_row->cores != to_row->cores || from_row->parallelism != to_row->parallelism) {
      diff.changed_plans.push_back(measure_change_of(key, *from_row, *to_row));
    }
    if (from_row->result != VerdictResult::kPass || to_row->result != VerdictResult::kPass)
      continue;
    if (beyond(from_row->runtime_s, to_row->runtime_s, options.relative, options.min_runtime_s)) {
      diff.run_time_changes.push_back(measure_change_of(key, *from_row, *to_row));
    }
    if (beyond(from_row->peak_device_memory_bytes, to_row->peak_device_memory_bytes,
               options.relative, 0.0)) {
      diff.memory_changes.push_back(measure_change_of(key, *from_row, *to_row));
    }
    if (beyond(from_row->speedup, to_row->speedup, options.relative, 0.0)) {
      diff.speedup_changes.push_back(measure_change_of(key, *from_row, *to_row));
    }
    if (beyond(from_row->compile_s, to_row->compile_s, options.relative, options.min_runtime_s)) {
      diff.compile_time_changes.push_back(measure_change_of(key, *from_row, *to_row));
    }
  }
  return diff;
}

}  // namespace canrun::dataset

namespace canrun::dataset {
namespace {

nlohmann::json result_json(const std::optional<VerdictResult>& result) {
  return result ? nlohmann::json(to_string(*result)) : nlohmann::json(nullptr);
}

nlohmann::json changes_json(const std::vector<VerdictChange>& changes) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& change : changes) {
    out.push_back({{"model_id", change.model_id},
                   {"task", change.task},
                   {"from", result_json(change.from_result)},
                   {"to", result_json(change.to_result)}});
  }
  return out;
}

nlohmann::json measures_json(const std::vector<MeasureChange>& changes) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& change : changes) {
    out.push_back({{"model_id", change.model_id},
                   {"task", change.task},
                   {"from_cores", optional_json(change.from_cores)},
                   {"to_cores", optional_json(change.to_cores)},
                   {"from_parallelism", optional_json(change.from_parallelism)},
                   {"to_parallelism", optional_json(change.to_parallelism)},
                   {"from_runtime_s", optional_json(change.from_runtime_s)},
                   {"to_runtime_s", optional_json(change.to_runtime_s)},
                   {"from_memory_bytes", optional_json(change.from_memory_bytes)},
                   {"to_memory_bytes", optional_json(change.to_memory_bytes)},
                   {"from_speedup", optional_json(change.from_speedup)},
                   {"to_speedup", optional_json(change.to_speedup)},
                   {"from_compile_s", optional_json(change.from_compile_s)},
                   {"to_compile_s", optional_json(change.to_compile_s)}});
  }
  return out;
}

}  // namespace

nlohmann::json diff_json(const StackDiff& diff) {
  return {{"regressions", changes_json(diff.regressions)},
          {"fixes", changes_json(diff.fixes)},
          {"unverified", changes_json(diff.unverified)},
          {"newly_tested", changes_json(diff.newly_tested)},
          {"no_longer_tested", changes_json(diff.no_longer_tested)},
          {"other_changes", changes_json(diff.other_changes)},
          {"changed_plans", measures_json(diff.changed_plans)},
          {"run_time_changes", measures_json(diff.run_time_changes)},
          {"memory_changes", measures_json(diff.memory_changes)},
          {"speedup_changes", measures_json(diff.speedup_changes)},
          {"compile_time_changes", measures_json(diff.compile_time_changes)},
          {"unchanged", diff.unchanged}};
}

}  // namespace canrun::dataset
