// One core, text generation: the tokens must equal the reference's.
#include <fmt/format.h>

#include "trial/verdict_rules.h"
#include "verify/verification.h"

namespace canrun::trial {

void compare_tokens_with_reference(const run::RunReport& report, const verify::Reference& reference,
                                   dataset::VerdictRow& row) {
  row.verification = std::string(verify::kVerificationReference);
  const verify::TokenMatch match = verify::compare_tokens(report.tokens, reference.tokens);
  row.match_tokens = match.match_tokens;
  if (match.identical) {
    row.result = VerdictResult::kPass;
    return;
  }
  row.result = VerdictResult::kFailMismatch;
  row.error =
      fmt::format("token {} of {} differs from the CPU reference\nreference: {}\ngot:       {}",
                  match.match_tokens + 1, reference.tokens.size(), reference.text, report.text);
  row.error_signature = "FAIL_MISMATCH";
}

}  // namespace canrun::trial
