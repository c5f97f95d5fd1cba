#include "dataset/diff.h"

#include <map>

namespace canrun::dataset {
namespace {

using RowKey = std::pair<std::string, std::string>;  // (model_id, task)

std::map<RowKey, const VerdictRow*> rows_by_key(const std::vector<VerdictRow>& rows) {
  std::map<RowKey, const VerdictRow*> by_key;
  for (const VerdictRow& row : rows) by_key[{row.model_id, row.task}] = &row;
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

}  // namespace

StackDiff diff_stacks(const std::vector<VerdictRow>& from, const std::vector<VerdictRow>& to) {
  const auto from_rows = rows_by_key(from);
  const auto to_rows = rows_by_key(to);
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
  }
  return diff;
}

}  // namespace canrun::dataset
