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
inline constexpr std::array<std::string_view, 8> kExclusionReasons = {
    "low_priority", "incompatible",     "gated",          "remote_code",
    "too_large",    "no_parallel_plan", "no_safetensors", "unsupported_task"};

}  // namespace canrun
