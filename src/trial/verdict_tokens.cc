// One core, text generation: the tokens must equal the reference's, unless they part from it
// where the reference itself was nearly tied and the teacher-forced agreement shows the model
// predicts the reference's tokens.
#include <fmt/format.h>

#include "trial/verdict_rules.h"
#include "verify/logits.h"
#include "verify/long_agreement.h"
#include "verify/verification.h"

namespace canrun::trial {

std::optional<double> near_tie_at(const verify::Reference& reference, std::size_t at,
                                  std::size_t run_tokens, std::string_view dtype) {
  if (at >= reference.margins.size() || at >= std::min(run_tokens, reference.tokens.size()) ||
      reference.margins[at] > verify::logits_tie_tolerance(dtype)) {
    return std::nullopt;
  }
  return reference.margins[at];
}

void compare_tokens_with_reference(const run::RunReport& report, const verify::Reference& reference,
                                   std::string_view dtype, dataset::VerdictRow& row) {
  row.verification = std::string(verify::kVerificationReference);
  const verify::TokenMatch match = verify::compare_tokens(report.tokens, reference.tokens);
  row.match_tokens = match.match_tokens;
  if (match.identical) {
    row.result = VerdictResult::kPass;
    return;
  }
  const std::optional<double> margin = near_tie_at(
      reference, static_cast<std::size_t>(match.match_tokens), report.tokens.size(), dtype);
  std::string tie;
  if (margin) {
    row.near_tie = true;
    if (report.agreement && *report.agreement >= verify::kAgreementThreshold) {
      // Rounding picked the other of two tied tokens; fed the reference's, the model goes on
      // predicting them: not a backend failure.
      row.result = VerdictResult::kPass;
      return;
    }
    tie = fmt::format(
        "\nthe reference's two best logits there were within {:.2g} of its largest (a near-tie), "
        "but the teacher-forced agreement {} is below {:.2f}",
        *margin,
        report.agreement ? fmt::format("{:.3f}", *report.agreement) : std::string("(not measured)"),
        verify::kAgreementThreshold);
  }
  row.result = VerdictResult::kFailMismatch;
  row.error = fmt::format(
      "token {} of {} differs from the CPU reference{}\nreference: {}\ngot:       {}",
      match.match_tokens + 1, reference.tokens.size(), tie, reference.text, report.text);
  row.error_signature = "FAIL_MISMATCH";
}

void record_long_agreement(const run::RunReport& report, dataset::VerdictRow& row) {
  if (report.agreed.size() <= static_cast<std::size_t>(report.agreement_positions.value_or(0))) {
    return;  // no position past the check's: there was no long generation to agree over
  }
  const auto found = verify::long_agreement(report.agreed, verify::kAgreementThreshold);
  if (!found) return;
  row.long_agreement = found->agreement;
  row.drifts_after = found->drifts_after;
}

namespace {

//! `text` on one line: a line break or another control character (a random-weight model's
//! bytes) written as an escape, \n or \x0f, so that each text of the row keeps its line.
std::string one_line(std::string_view text) {
  std::string out;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if ((byte < 0x20 && c != '\t') || byte == 0x7f) {
      out += fmt::format("\\x{:02x}", byte);
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string predictions_text(const task::TaskSpec& spec, const run::RunReport& report,
                             const verify::Reference& reference) {
  if (!spec.shows_reference_prediction) return report.text;
  return fmt::format("{}this run: {}\nCPU reference: {}",
                     report.source.empty() ? "" : "source: " + report.source + "\n",
                     one_line(report.text), one_line(reference.text));
}

}  // namespace canrun::trial
