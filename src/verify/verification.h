// How a verdict's output was checked (SPEC.md §7): the values of the dataset's `verification`
// column, what each means, and the teacher-forced agreement a sharded run must reach.
// One list, read by the trial (which sets the column), the dataset card and the Space.
//
// Thread safety: constants only.
#pragma once

#include <array>
#include <string_view>

namespace canrun::verify {

//! One core: the generated tokens must equal the CPU reference's, all of them.
inline constexpr std::string_view kVerificationReference = "reference";
//! Sharded, with a CPU reference: the judge must find the text fluent AND the teacher-forced
//! agreement must reach kAgreementThreshold.
inline constexpr std::string_view kVerificationJudgeAndAgreement = "judge+agreement";
//! Sharded, without a teacher-forced agreement (the CPU reference failed, or the run did not
//! measure it): the judge alone decided.
inline constexpr std::string_view kVerificationJudge = "judge";

//! A `verification` value and the evidence behind it, for the card.
struct VerificationInfo {
  std::string_view name;
  std::string_view meaning;
};

inline constexpr std::array<VerificationInfo, 3> kVerifications = {{
    {kVerificationReference,
     "One core: every generated token equals the CPU reference's (`match_tokens` = "
     "`new_tokens`). `agreement` is recorded beside it as information."},
    {kVerificationJudgeAndAgreement,
     "Sharded, with a CPU reference: PASS needs both the judge model finding the text fluent "
     "(`judge_score` >= `judge_threshold`) and a teacher-forced `agreement` of at least 0.95 "
     "with the CPU reference. A run below that agreement is FAIL_MISMATCH, whatever the judge "
     "said; `match_tokens` is information."},
    {kVerificationJudge,
     "Sharded, without a teacher-forced agreement (the CPU reference could not be computed): "
     "the judge model alone decided."},
}};

//! The least teacher-forced agreement a sharded run needs to PASS (with a fluent text).
//! Calibrated on real CPU runs (inductor, gloo ranks) of the test fixtures and SmolLM2-135M
//! against the eager CPU reference, one core and sharded (TP and EP), float32 and bfloat16:
//! every healthy run agreed at 1.0 on 32 positions, and runs broken on one rank (a skipped
//! layer, a slightly perturbed partial sum) well below. 0.95 lets one position in 32 differ —
//! room for an accelerator whose arithmetic is not the CPU's (bf16 near-ties) — and still
//! fails a rank that computes something else. Keep the text of kVerifications in step.
inline constexpr double kAgreementThreshold = 0.95;

}  // namespace canrun::verify
