#include "dataset/diff.h"

#include <map>

namespace canrun::dataset {
namespace {

using RowKey = std::pair<std::string, std::string>;

std::map<RowKey, std::string> results_by_key(const std::vector<VerdictRow>& rows) {
  std::map<RowKey, std::string> results;
  for (const VerdictRow& row : rows)
    results[{row.model_id, row.task}] = std::string(to_string(row.result));
  return results;
}

bool tested(const std::optional<std::string>& result) { return result && *result != "EXCLUDED"; }

}  // namespace

StackDiff diff_stacks(const std::vector<VerdictRow>& from, const std::vector<VerdictRow>& to) {
  const auto from_results = results_by_key(from);
  const auto to_results = results_by_key(to);
  std::map<RowKey, VerdictChange> all;
  for (const auto& [key, result] : from_results) all[key] = {key.first, key.second, result, {}};
  for (const auto& [key, result] : to_results) {
    auto& change = all[key];
    change.model_id = key.first;
    change.task = key.second;
    change.to_result = result;
  }
  StackDiff diff;
  for (auto& [key, change] : all) {
    const bool was_tested = tested(change.from_result);
    const bool is_tested = tested(change.to_result);
    if (!was_tested && !is_tested) {
      ++diff.unchanged;
    } else if (!was_tested) {
      diff.newly_tested.push_back(std::move(change));
    } else if (!is_tested) {
      diff.no_longer_tested.push_back(std::move(change));
    } else if (*change.from_result == *change.to_result) {
      ++diff.unchanged;
    } else if (*change.from_result == "PASS") {
      diff.regressions.push_back(std::move(change));
    } else if (*change.to_result == "PASS") {
      diff.fixes.push_back(std::move(change));
    } else {
      diff.other_changes.push_back(std::move(change));
    }
  }
  return diff;
}

}  // namespace canrun::dataset
