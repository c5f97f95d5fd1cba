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

}  // namespace canrun
