// What changed between two stacks (SPEC.md §2, journey 6), by the one regression rule of
// core/verdict_result.h: regressions, fixes, unverified (PASS → no verdict on the backend,
// listed apart and never counted as a regression), models newly tested, models no longer
// tested, and other result changes. "Tested" means a row whose result is not EXCLUDED.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "dataset/verdict_row.h"

namespace canrun::dataset {

//! One (model, task) whose verdict differs between the two stacks. A side is nullopt when that
//! stack has no row for it.
struct VerdictChange {
  std::string model_id;
  std::string task;
  std::optional<VerdictResult> from_result;
  std::optional<VerdictResult> to_result;
  std::optional<std::string> from_exclusion_reason;  //!< set when from_result is EXCLUDED
  std::optional<std::string> to_exclusion_reason;    //!< set when to_result is EXCLUDED
};

//! Each change is in exactly one list, tried in this order.
struct StackDiff {
  std::vector<VerdictChange> regressions;       //!< is_regression: PASS → blames the backend
  std::vector<VerdictChange> fixes;             //!< is_fix: blamed the backend → PASS
  std::vector<VerdictChange> unverified;        //!< is_unverified: PASS → no verdict
  std::vector<VerdictChange> newly_tested;      //!< absent or EXCLUDED → tested
  std::vector<VerdictChange> no_longer_tested;  //!< tested → absent or EXCLUDED
  std::vector<VerdictChange> other_changes;  //!< e.g. one failure → another, REFERENCE_FAIL → PASS
  std::size_t unchanged = 0;                 //!< same result, or untested on both sides
};

//! Compares by (model_id, task); every list is sorted by model id, then task.
StackDiff diff_stacks(const std::vector<VerdictRow>& from, const std::vector<VerdictRow>& to);

}  // namespace canrun::dataset
