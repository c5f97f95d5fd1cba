// How a verdict's output was checked (SPEC.md §7): the values of the dataset's `verification`
// column, what each means, and the teacher-forced agreement a sharded run must reach.
// One list, read by the trial (which sets the column), the dataset card and the Space.
//
// Thread safety: constants only.
#pragma once

#include <array>
#include <string_view>

namespace canrun::verify {

//! One core: the output must equal the CPU reference's — all the generated tokens, or every
//! embedding within its cosine threshold (verify/embeddings.h).
inline constexpr std::string_view kVerificationReference = "reference";
//! Sharded, with a CPU reference: the judge must find the text fluent AND the teacher-forced
//! agreement must reach kAgreementThreshold.
inline constexpr std::string_view kVerificationJudgeAndAgreement = "judge+agreement";
//! Sharded, without a teacher-forced agreement (the CPU reference failed, or the run did not
//! measure it): the judge alone decided.
inline constexpr std::string_view kVerificationJudge = "judge";
//! Sharded, random weights (the census): no English to judge, so the teacher-forced agreement
//! with the CPU reference alone decided.
inline constexpr std::string_view kVerificationAgreement = "agreement";

//! A `verification` value and the evidence behind it, for the card.
struct VerificationInfo {
  std::string_view name;
  std::string_view meaning;
};

inline constexpr std::array<VerificationInfo, 4> kVerifications = {{
    {kVerificationReference,
     "One core: the output equals the CPU reference's. Text generation: every generated token "
     "(`match_tokens` = `new_tokens`; `agreement` recorded beside it as information). Sentence "
     "similarity: each sentence's embedding, encoded in batches and one at a time, has cosine "
     "similarity with the reference's of at least 0.99999 (float32) or 0.999 (bfloat16, "
     "float16), and each query of the recipe's retrieval set finds its 3 nearest documents in "
     "the reference's order; `output_text` gives the lowest cosine. Text classification, "
     "fill-mask, token classification: the logits (per sentence, masked token or token) pick "
     "the reference's best class in every row, unless the reference's two are within 1e-4 "
     "(float32) or 0.05 (bfloat16, float16) of the row's largest logit, and each row's "
     "relative error is at most 1e-4 (float32) or 0.25 (bfloat16, float16). Text-to-image: "
     "the image is not blank, holds no NaN, and has PSNR at least 35 dB and SSIM at least 0.98 "
     "(float32; 25 dB and 0.90 in bfloat16, float16) against the reference image drawn from "
     "the same seed."},
    {kVerificationJudgeAndAgreement,
     "Sharded, with a CPU reference: PASS needs both the judge model finding the text fluent "
     "(`judge_score` >= `judge_threshold`) and a teacher-forced `agreement` with the CPU "
     "reference of at least the threshold given below. A run below it is FAIL_MISMATCH, "
     "whatever the judge said; `match_tokens` is information."},
    {kVerificationJudge,
     "Sharded, without a teacher-forced agreement (the CPU reference could not be computed): "
     "the judge model alone decided."},
    {kVerificationAgreement,
     "Sharded, random weights (the census's tiny checkpoints, which write no English): no "
     "judge; PASS needs a teacher-forced `agreement` with the CPU reference of at least the "
     "threshold given below, else FAIL_MISMATCH. A CPU reference that failed is "
     "REFERENCE_FAIL. `match_tokens` is information."},
}};

//! The least teacher-forced agreement a sharded run needs to PASS (with a fluent text).
//! Calibrated on real CPU runs (inductor, gloo ranks) of 32 positions against the eager CPU
//! reference: healthy runs agreed at 1.0 in float32 (tiny-llama, tiny-qwen2 TP 2, tiny-phimoe
//! EP 2, SmolLM2-135M TP 3) and at 0.9375 (30/32) in bfloat16 (the same fixtures sharded;
//! 0.969 on one core), where random fixture weights leave near-ties that rounding flips. Runs
//! with rank 1's weight shard off by 5 % agreed at 0.781 (tiny-llama TP 2) and 0.875 (SmolLM2
//! TP 3, whose text stayed fluent English). 0.90 (29 of 32) sits between the lowest healthy run
//! and the highest broken one, one position below the bfloat16 runs for an accelerator's own
//! rounding.
inline constexpr double kAgreementThreshold = 0.90;

}  // namespace canrun::verify
