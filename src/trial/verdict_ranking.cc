// One core, a reranker: the scores in the run's outputs file against the reference's.
#include <fmt/format.h>

#include "trial/verdict_rules.h"
#include "verify/logits.h"
#include "verify/ranking.h"
#include "verify/verification.h"

namespace canrun::trial {

namespace fs = std::filesystem;

namespace {

//! An order of documents as people count them: "d2 > d1 > d3".
std::string order_text(const std::vector<std::size_t>& order) {
  std::vector<std::string> named;
  for (std::size_t document : order) named.push_back(fmt::format("d{}", document + 1));
  return fmt::format("{}", fmt::join(named, " > "));
}

}  // namespace

Status compare_ranking_with_reference(const task::TaskSpec& spec, const fs::path& run_dir,
                                      const run::RunReport& report,
                                      const verify::Reference& reference, const std::string& dtype,
                                      dataset::VerdictRow& row) {
  row.verification = std::string(verify::kVerificationReference);
  CANRUN_ASSIGN_OR_RETURN(const OutputTensors tensors,
                          read_output_tensors(run_dir, report, reference, "scores"));
  const verify::Tensor& got = tensors.got;
  const verify::RankingComparison compared = verify::compare_ranking(got, tensors.expected, dtype);
  const double threshold = verify::logits_relative_error_threshold(dtype);
  row.output_text = fmt::format(
      "{}\n{} queries × {} documents; largest relative error of a query's scores against the "
      "CPU reference {:.3g} (threshold {:g}){}",
      predictions_text(spec, report, reference), compared.queries, compared.documents,
      compared.max_relative_error, threshold, throughput_suffix(report));
  if (!compared.shape_error.empty()) {
    fail_comparison(
        row, fmt::format("the scores do not match the CPU reference's: {}", compared.shape_error),
        "scores");
  } else if (compared.order_differs) {
    fail_comparison(row,
                    fmt::format("query {}: the documents rank {}, the CPU reference's {}",
                                *compared.order_differs + 1, order_text(compared.order),
                                order_text(compared.reference_order)),
                    "scores");
  } else if (!(compared.max_relative_error <= threshold)) {
    fail_comparison(row,
                    fmt::format("query {}: the scores are {:.3g} away from the CPU reference's "
                                "(relative error), above the {} threshold {:g}",
                                compared.worst + 1, compared.max_relative_error, dtype, threshold),
                    "scores");
  } else {
    row.result = VerdictResult::kPass;
  }
  return ok_status();
}

}  // namespace canrun::trial
