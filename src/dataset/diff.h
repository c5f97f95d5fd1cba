// What changed between two stacks (SPEC.md §2, journey 6), by the one regression rule of
// core/verdict_result.h: regressions, fixes, unverified (PASS → no verdict on the backend,
// listed apart and never counted as a regression), models newly tested, models no longer
// tested, and other result changes; and, for models tested on both, changed plans (cores,
// parallelism) and run-time, memory, speedup and compile-time changes of PASSes beyond a
// threshold (20 %: what the compiler dashboard's regressions are read against). "Tested" means a
// row whose result is not EXCLUDED.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
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

//! A (model, task) tested on both stacks whose plan or measurements differ.
struct MeasureChange {
  std::string model_id;
  std::string task;
  std::optional<std::int32_t> from_cores, to_cores;
  std::optional<std::string> from_parallelism, to_parallelism;
  std::optional<double> from_runtime_s, to_runtime_s;
  std::optional<std::int64_t> from_memory_bytes, to_memory_bytes;  //!< peak device memory
  std::optional<double> from_speedup, to_speedup;                  //!< over eager (schema 9)
  std::optional<double> from_compile_s, to_compile_s;
};

//! How much a PASS's run time or peak memory must change to be listed: at least this share of
//! the older value (and, for run time, at least min_runtime_s seconds); and which rows count.
struct DiffOptions {
  double relative = 0.2;
  double min_runtime_s = 1.0;
  std::string task;  //!< only this task's rows; empty: every task
};

//! Each verdict change is in exactly one list, tried in this order. The plan and measurement
//! lists are apart: a model may be in one of them and in a verdict list too.
struct StackDiff {
  std::vector<VerdictChange> regressions;       //!< is_regression: PASS → blames the backend
  std::vector<VerdictChange> fixes;             //!< is_fix: blamed the backend → PASS
  std::vector<VerdictChange> unverified;        //!< is_unverified: PASS → no verdict
  std::vector<VerdictChange> newly_tested;      //!< absent or EXCLUDED → tested
  std::vector<VerdictChange> no_longer_tested;  //!< tested → absent or EXCLUDED
  std::vector<VerdictChange> other_changes;  //!< e.g. one failure → another, REFERENCE_FAIL → PASS
  std::size_t unchanged = 0;                 //!< same result, or untested on both sides
  std::vector<MeasureChange> changed_plans;     //!< tested on both: other cores or parallelism
  std::vector<MeasureChange> run_time_changes;  //!< PASS on both: run time beyond the threshold
  std::vector<MeasureChange> memory_changes;    //!< PASS on both: peak memory beyond it
  //! PASS on both: speedup over eager, or compile time (and by min_runtime_s), beyond it.
  std::vector<MeasureChange> speedup_changes;
  std::vector<MeasureChange> compile_time_changes;
};

//! The lists as JSON, one key each ("regressions", ..., "changed_plans", "run_time_changes",
//! "memory_changes", "speedup_changes", "compile_time_changes", "unchanged"): verdict changes as
//! {model_id, task, from, to} (null: no row), measure changes with from_/to_ cores,
//! parallelism, runtime_s, memory_bytes, speedup and compile_s.
nlohmann::json diff_json(const StackDiff& diff);

//! Compares by (model_id, task); every list is sorted by model id, then task.
StackDiff diff_stacks(const std::vector<VerdictRow>& from, const std::vector<VerdictRow>& to,
                      const DiffOptions& options = {});

}  // namespace canrun::dataset
