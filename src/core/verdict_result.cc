#include "core/verdict_result.h"

namespace canrun {

const std::array<VerdictResultInfo, 11>& verdict_results() {
  static constexpr std::array<VerdictResultInfo, 11> kResults = {{
      {VerdictResult::kPass, "PASS",
       "Ran and generated N tokens, verified: identical to the CPU reference on one core, "
       "judged fluent when sharded."},
      {VerdictResult::kFailLoad, "FAIL_LOAD",
       "Loading or sharding the model failed (e.g. architecture unknown to this library)."},
      {VerdictResult::kFailCompile, "FAIL_COMPILE", "The backend compiler failed."},
      {VerdictResult::kFailRuntime, "FAIL_RUNTIME",
       "An error while generating, after compilation."},
      {VerdictResult::kFailOom, "FAIL_OOM", "The device ran out of memory."},
      {VerdictResult::kFailMismatch, "FAIL_MISMATCH",
       "Generated tokens differ from the CPU reference (single core)."},
      {VerdictResult::kFailJudge, "FAIL_JUDGE",
       "The judge model found the text not fluent (sharded)."},
      {VerdictResult::kTimeout, "TIMEOUT",
       "The test ran past its time limit; every process of it was killed."},
      {VerdictResult::kCrash, "CRASH", "The process died (signal, or exit without a result line)."},
      {VerdictResult::kReferenceFail, "REFERENCE_FAIL",
       "The CPU reference itself failed, so no verdict is given for the backend."},
      {VerdictResult::kExcluded, "EXCLUDED", "Not run; exclusion_reason says why."},
  }};
  return kResults;
}

std::string_view to_string(VerdictResult result) {
  for (const auto& info : verdict_results()) {
    if (info.result == result) return info.name;
  }
  return "CRASH";
}

std::optional<VerdictResult> parse_verdict_result(std::string_view text) {
  for (const auto& info : verdict_results()) {
    if (info.name == text) return info.result;
  }
  return std::nullopt;
}

std::string verdict_result_names() {
  std::string names;
  for (const auto& info : verdict_results()) {
    if (!names.empty()) names += ", ";
    names += info.name;
  }
  return names;
}

bool is_planner_exclusion(std::string_view exclusion_reason) {
  return exclusion_reason == "too_large" || exclusion_reason == "no_parallel_plan";
}

bool blames_backend(VerdictResult result) {
  switch (result) {
    case VerdictResult::kFailLoad:
    case VerdictResult::kFailCompile:
    case VerdictResult::kFailRuntime:
    case VerdictResult::kFailOom:
    case VerdictResult::kFailMismatch:
    case VerdictResult::kFailJudge:
    case VerdictResult::kTimeout:
    case VerdictResult::kCrash:
      return true;
    case VerdictResult::kPass:
    case VerdictResult::kReferenceFail:
    case VerdictResult::kExcluded:
      return false;
  }
  return false;
}

namespace {

//! The outcomes that count against the backend: the ones a PASS may regress to.
bool counts_against_backend(const VerdictOutcome& outcome) {
  return blames_backend(outcome.result) || (outcome.result == VerdictResult::kExcluded &&
                                            is_planner_exclusion(outcome.exclusion_reason));
}

}  // namespace

bool is_regression(const VerdictOutcome& from, const VerdictOutcome& to) {
  return from.result == VerdictResult::kPass && counts_against_backend(to);
}

bool is_fix(const VerdictOutcome& from, const VerdictOutcome& to) {
  return counts_against_backend(from) && to.result == VerdictResult::kPass;
}

bool is_unverified(const VerdictOutcome& from, const VerdictOutcome& to) {
  return from.result == VerdictResult::kPass && to.result != VerdictResult::kPass &&
         !counts_against_backend(to);
}

std::string_view display_class(VerdictResult result) {
  if (result == VerdictResult::kPass) return "pass";
  if (result == VerdictResult::kExcluded) return "excluded";
  // Not the backend's fault (REFERENCE_FAIL), or perhaps only a slow one (TIMEOUT).
  if (result == VerdictResult::kTimeout || result == VerdictResult::kReferenceFail) return "warn";
  return "fail";
}

}  // namespace canrun
