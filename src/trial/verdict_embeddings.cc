// One core, an embedding task: every embedding near the reference's, the same nearest documents
// for each query, whether encoded in batches or one at a time.
#include <fmt/format.h>

#include <algorithm>

#include "trial/verdict_rules.h"
#include "verify/embeddings.h"
#include "verify/verification.h"

namespace canrun::trial {

void compare_embeddings_with_reference(const run::RunReport& report,
                                       const verify::Reference& reference, const std::string& dtype,
                                       dataset::VerdictRow& row) {
  row.verification = std::string(verify::kVerificationReference);
  const double threshold = verify::embedding_cosine_threshold(dtype);
  const auto queries = static_cast<std::size_t>(std::max<std::int64_t>(0, reference.queries));
  const verify::EmbeddingComparison batched =
      verify::compare_embeddings(report.embeddings, reference.embeddings, queries);
  const verify::EmbeddingComparison alone =
      verify::compare_embeddings(report.embeddings_one_at_a_time, reference.embeddings, queries);
  const bool batched_worse = !batched.shape_error.empty() || batched.min_cosine < alone.min_cosine;
  const verify::EmbeddingComparison& worst = batched_worse ? batched : alone;
  const char* how = batched_worse ? "encoded in batches" : "encoded one at a time";
  // feature-extraction says how it pooled, and from what.
  const std::string pooled = report.pooling.empty()
                                 ? std::string()
                                 : fmt::format(" ({}; {})", report.pooling, report.pooling_source);
  std::string summary = fmt::format(
      "{} sentences, {}-dimensional embeddings{}; lowest cosine similarity with the CPU "
      "reference {:.6f} (threshold {})",
      reference.embeddings.size(),
      reference.embeddings.empty() ? 0 : reference.embeddings[0].size(), pooled,
      worst.shape_error.empty() ? worst.min_cosine : 0.0, threshold);
  summary += throughput_suffix(report);
  row.output_text = std::move(summary);
  std::string error;
  if (!worst.shape_error.empty()) {
    error = fmt::format("the embeddings {} do not match the CPU reference's: {}", how,
                        worst.shape_error);
  } else if (worst.min_cosine < threshold) {
    error = fmt::format(
        "sentence {}'s embedding ({}) has cosine similarity {:.6f} with the CPU reference's, "
        "below the {} threshold {}",
        worst.worst + 1, how, worst.min_cosine, dtype, threshold);
  } else if (const auto& differs =
                 batched.query_differs ? batched.query_differs : alone.query_differs) {
    error = fmt::format("query {}'s nearest {} documents are not the CPU reference's, in its order",
                        *differs + 1, verify::kNeighboursCompared);
  }
  if (error.empty()) {
    row.result = VerdictResult::kPass;
    return;
  }
  row.result = VerdictResult::kFailMismatch;
  row.error = std::move(error);
  row.error_signature = "FAIL_MISMATCH | embeddings differ from the CPU reference";
}

}  // namespace canrun::trial
