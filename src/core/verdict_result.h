// The result of one test (SPEC.md §7) and the reasons a model is excluded from testing.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace canrun {

enum class VerdictResult {
  kPass,
  kFailLoad,
  kFailCompile,
  kFailRuntime,
  kFailOom,
  kFailMismatch,
  kFailJudge,
  kTimeout,
  kCrash,
  kReferenceFail,
  kExcluded,
};

//! Every result with its dataset spelling and its meaning, in SPEC.md order.
struct VerdictResultInfo {
  VerdictResult result;
  std::string_view name;     //!< as stored in the `result` column, e.g. "FAIL_OOM"
  std::string_view meaning;  //!< one sentence for the dataset card and the Space
};
const std::array<VerdictResultInfo, 11>& verdict_results();

std::string_view to_string(VerdictResult result);
//! Parses the dataset spelling ("PASS", "FAIL_OOM", ...); nullopt for anything else.
std::optional<VerdictResult> parse_verdict_result(std::string_view text);
//! "PASS, FAIL_LOAD, ..., EXCLUDED": every dataset spelling in SPEC.md order, for messages that
//! refuse a value.
std::string verdict_result_names();

//! The exclusion reason categories of SPEC.md §7. A curator may also give a free-text note.
//! The census (src/census) adds two of its own: `build_failed` (no tiny checkpoint of the model
//! type could be built; the error says at which step) and `other_task` (the type is in the
//! task's mapping but belongs to another task: an encoder's LM head, an encoder-decoder's
//! decoder).
inline constexpr std::array<std::string_view, 11> kExclusionReasons = {
    "low_priority", "incompatible",     "gated",          "remote_code",
    "too_large",    "no_parallel_plan", "no_safetensors", "unsupported_task",
    "quantized",    "build_failed",     "other_task"};

//! Whether an exclusion is the planner's (the model does not fit the backend: `too_large`,
//! `no_parallel_plan`), which says something about the backend, rather than a curator's or the
//! catalog's choice, which says nothing about it.
bool is_planner_exclusion(std::string_view exclusion_reason);

// --- The regression rule -------------------------------------------------------------------
// Every place that compares two verdicts of one model (`canrun dataset diff`, the Space's
// history) asks these functions, so a regression means one thing everywhere:
//   regression  PASS → a result that blames the backend, or → EXCLUDED by the planner;
//   fix         a result that blamed the backend, or EXCLUDED by the planner → PASS;
//   unverified  PASS → REFERENCE_FAIL, or → EXCLUDED for any other reason (a curator's, gated,
//               ...): nothing says the backend got worse, so it is listed apart and never
//               counted as a regression.
// At most one of the three holds for a pair.

//! Whether a result puts the fault on the backend under test: every FAIL_*, TIMEOUT, CRASH.
bool blames_backend(VerdictResult result);

//! A verdict as the rule reads it: the result and, for EXCLUDED, why. Holds a view: the
//! reason's text must outlive it.
struct VerdictOutcome {
  VerdictResult result;
  std::string_view exclusion_reason;  //!< empty unless result is EXCLUDED
};

bool is_regression(const VerdictOutcome& from, const VerdictOutcome& to);
bool is_fix(const VerdictOutcome& from, const VerdictOutcome& to);
bool is_unverified(const VerdictOutcome& from, const VerdictOutcome& to);

//! How a result is shown: "pass", "fail", "warn" (TIMEOUT, REFERENCE_FAIL) or "excluded". The
//! Space adds kUntestedClass for a model without a row.
std::string_view display_class(VerdictResult result);
inline constexpr std::string_view kUntestedClass = "untested";

}  // namespace canrun
