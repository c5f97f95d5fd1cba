// Verification of an embedding task against the CPU reference (SPEC.md §7): each sentence's
// embedding must point where the reference's does (cosine similarity at least the dtype's
// threshold), and the retrieval set must rank the same documents first for each query.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace canrun::verify {

using Embeddings = std::vector<std::vector<double>>;

//! The least cosine similarity with the CPU reference an embedding needs, per dtype of the
//! weights. Measured on all-MiniLM-L6-v2 on the CPU, TorchInductor against the eager reference,
//! batched and one sentence at a time: float32 1 - 3e-13 at worst, bfloat16 1 - 4e-5 (the eager
//! reference itself, one at a time against batched: the same 4e-5). float32: 1 - 1e-5, room for
//! an accelerator's reduced-precision matmuls (TF32 rounds to 1e-3 per product); bfloat16 and
//! float16: 1 - 1e-3, twenty-five times the worst seen.
double embedding_cosine_threshold(std::string_view dtype);

//! How many of each query's nearest documents must come in the reference's order.
inline constexpr std::size_t kNeighboursCompared = 3;

struct EmbeddingComparison {
  double min_cosine = 0;  //!< the lowest cosine with the reference's embedding
  std::size_t worst = 0;  //!< the sentence it belongs to
  //! The first query whose nearest documents differ from the reference's; none: all agree.
  std::optional<std::size_t> query_differs;
  std::string shape_error;  //!< set when the embeddings cannot be compared at all
};

//! Compares each embedding of `got` with the same sentence's of `reference`; the first `queries`
//! sentences are queries, the rest documents.
EmbeddingComparison compare_embeddings(const Embeddings& got, const Embeddings& reference,
                                       std::size_t queries);

double cosine(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace canrun::verify
