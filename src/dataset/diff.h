// What changed between two stacks (SPEC.md §2, journey 6): regressions (PASS → not PASS),
// fixes, models newly tested, models no longer tested, and other result changes.
// "Tested" means a row whose result is not EXCLUDED.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "dataset/verdict_row.h"

namespace canrun::dataset {

struct VerdictChange {
  std::string model_id;
  std::string task;
  std::optional<std::string> from_result;  //!< nullopt: no row in the "from" stack
  std::optional<std::string> to_result;    //!< nullopt: no row in the "to" stack
};

struct StackDiff {
  std::vector<VerdictChange> regressions;       //!< PASS → tested, not PASS
  std::vector<VerdictChange> fixes;             //!< tested, not PASS → PASS
  std::vector<VerdictChange> newly_tested;      //!< absent or EXCLUDED → tested
  std::vector<VerdictChange> no_longer_tested;  //!< tested → absent or EXCLUDED
  std::vector<VerdictChange> other_changes;     //!< one failure → another failure
  std::size_t unchanged = 0;
};

//! Compares by (model_id, task); every list is sorted by model id.
StackDiff diff_stacks(const std::vector<VerdictRow>& from, const std::vector<VerdictRow>& to);

}  // namespace canrun::dataset
