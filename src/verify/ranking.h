// Verification of a reranker (text-ranking) against the CPU reference: run.py scores every
// document of a fixed set against every query (a [queries, documents] matrix of the model's
// relevance scores). Each query's scores must stay within the dtype's relative error of the
// reference's (the scores are logits: the thresholds of verify/logits.h), and order the
// documents as the reference does, except a pair the reference itself nearly tied.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "verify/tensor_file.h"

namespace canrun::verify {

struct RankingComparison {
  std::size_t queries = 0, documents = 0;
  double max_relative_error = 0;  //!< the worst query's ‖got − reference‖ / ‖reference‖
  std::size_t worst = 0;          //!< that query
  //! The first query whose order of documents is not the reference's (beyond a near-tie);
  //! none: every query orders them alike.
  std::optional<std::size_t> order_differs;
  //! In that query, documents by descending score (0-based): the run's and the reference's.
  std::vector<std::size_t> order, reference_order;
  std::string shape_error;  //!< set when the two cannot be compared at all
};

//! The documents of a row of scores, best first (ties: the earlier document first).
std::vector<std::size_t> ranked_documents(const double* scores, std::size_t documents);

RankingComparison compare_ranking(const Tensor& got, const Tensor& reference,
                                  std::string_view dtype);

}  // namespace canrun::verify
