// One core, an encoder task: the logits in the run's outputs file against the reference's.
#include <fmt/format.h>

#include "trial/verdict_rules.h"
#include "verify/logits.h"
#include "verify/verification.h"

namespace canrun::trial {

namespace fs = std::filesystem;

Status compare_logits_with_reference(const task::TaskSpec& spec, const fs::path& run_dir,
                                     const run::RunReport& report,
                                     const verify::Reference& reference, const std::string& dtype,
                                     dataset::VerdictRow& row) {
  row.verification = std::string(verify::kVerificationReference);
  CANRUN_ASSIGN_OR_RETURN(const OutputTensors tensors,
                          read_output_tensors(run_dir, report, reference, "logits"));
  const verify::Tensor& got = tensors.got;
  const verify::LogitsComparison compared = verify::compare_logits(got, tensors.expected, dtype);
  const std::string_view row_noun = spec.logits_row.empty() ? "row" : spec.logits_row;
  const double threshold = verify::logits_relative_error_threshold(dtype);
  const std::string predicted = predictions_text(spec, report, reference);
  row.output_text = fmt::format(
      "{}\n{} rows of logits; largest relative error against the CPU reference {:.3g} "
      "(threshold {:g}){}",
      predicted, compared.rows, compared.max_relative_error, threshold, throughput_suffix(report));
  if (!compared.shape_error.empty()) {
    fail_comparison(
        row, fmt::format("the logits do not match the CPU reference's: {}", compared.shape_error),
        "logits");
  } else if (compared.argmax_differs) {
    fail_comparison(
        row,
        fmt::format("{} {}: the logits pick class {}, the CPU reference's class {}", row_noun,
                    *compared.argmax_differs + 1, compared.argmax, compared.reference_argmax),
        "logits");
  } else if (!(compared.max_relative_error <= threshold)) {
    fail_comparison(
        row,
        fmt::format("{} {}: the logits are {:.3g} away from the CPU reference's "
                    "(relative error), above the {} threshold {:g}",
                    row_noun, compared.worst + 1, compared.max_relative_error, dtype, threshold),
        "logits");
  } else {
    row.result = VerdictResult::kPass;
  }
  return ok_status();
}

}  // namespace canrun::trial
