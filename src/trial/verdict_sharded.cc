// Sharded, text generation: the judge's judgement of the text, and the teacher-forced agreement
// with the CPU reference where the run measured it.
#include <fmt/format.h>

#include "trial/verdict_rules.h"
#include "verify/verification.h"

namespace canrun::trial {

namespace {

//! FAIL_MISMATCH for an agreement below the threshold; `detail` (what the judge found, a
//! near-tie) follows the count of positions.
void fail_agreement(const run::RunReport& report, const verify::Reference& reference,
                    const std::string& detail, dataset::VerdictRow& row) {
  row.result = VerdictResult::kFailMismatch;
  const std::int64_t positions = report.agreement_positions.value_or(0);
  const auto agreed = static_cast<std::int64_t>(
      report.agreement.value_or(0) * static_cast<double>(positions) + 0.5);
  row.error = fmt::format(
      "teacher-forced agreement {:.3f} below threshold {:.2f}: fed the CPU reference's tokens, "
      "the model's next token was the reference's at {} of {} positions{}\n"
      "reference: {}\ngot:       {}",
      report.agreement.value_or(0), verify::kAgreementThreshold, agreed, positions, detail,
      reference.text, report.text);
  row.error_signature = "FAIL_MISMATCH | teacher-forced agreement below threshold";
}

}  // namespace

Status agree_sharded_run(const run::RunReport& report, const verify::Reference& reference,
                         std::string_view dtype, dataset::VerdictRow& row) {
  if (!report.agreement) {
    return corrupt(
        "the sharded run did not measure its teacher-forced agreement, which decides "
        "for random weights");
  }
  const verify::TokenMatch match = verify::compare_tokens(report.tokens, reference.tokens);
  row.match_tokens = match.match_tokens;
  row.verification = std::string(verify::kVerificationAgreement);
  const std::optional<double> margin = near_tie_at(
      reference, static_cast<std::size_t>(match.match_tokens), report.tokens.size(), dtype);
  if (margin) row.near_tie = true;
  if (*report.agreement < verify::kAgreementThreshold) {
    fail_agreement(report, reference,
                   margin ? fmt::format("; the free-running tokens part from the reference's at "
                                        "token {}, where its two best logits were within {:.2g} "
                                        "of its largest (a near-tie)",
                                        match.match_tokens + 1, *margin)
                          : "",
                   row);
  } else {
    row.result = VerdictResult::kPass;
  }
  return ok_status();
}

void judge_sharded_run(const run::RunReport& report,
                       const std::optional<verify::Reference>& reference,
                       const judge::Judgement& judgement, dataset::VerdictRow& row) {
  if (reference)
    row.match_tokens = verify::compare_tokens(report.tokens, reference->tokens).match_tokens;
  const bool by_agreement = reference && report.agreement;
  row.verification = std::string(by_agreement ? verify::kVerificationJudgeAndAgreement
                                              : verify::kVerificationJudge);
  row.judge_score = judgement.score;
  row.judge_threshold = judgement.threshold;
  row.judge_model = judgement.judge;
  row.judge_parts = judgement.parts;
  const std::string judged =
      fmt::format("the judge {} scored the text {:.3f}, {} its threshold {:.3f}", judgement.judge,
                  judgement.score, judgement.fluent ? "at or above" : "below", judgement.threshold);
  if (by_agreement && *report.agreement < verify::kAgreementThreshold) {
    // The stronger evidence: fed the reference's own tokens, the sharded model predicts other
    // next tokens — whatever its free-running text looks like.
    fail_agreement(report, *reference,
                   fmt::format(" ({}: {})", judged,
                               judgement.fluent ? "fluent English" : "not fluent English"),
                   row);
  } else if (judgement.fluent) {
    row.result = VerdictResult::kPass;
  } else {
    row.result = VerdictResult::kFailJudge;
    row.error = fmt::format("{}: not fluent English\ngot: {}", judged, report.text);
    row.error_signature = "FAIL_JUDGE";
  }
}

}  // namespace canrun::trial
