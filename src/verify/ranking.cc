#include "verify/ranking.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "verify/logits.h"

namespace canrun::verify {

std::vector<std::size_t> ranked_documents(const double* scores, std::size_t documents) {
  std::vector<std::size_t> order(documents);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [scores](std::size_t a, std::size_t b) { return scores[a] > scores[b]; });
  return order;
}

namespace {

//! Whether the run orders every pair of documents as the reference does, where the reference's
//! two scores are further apart than `tie` (a share of the row's largest magnitude).
bool same_order(const double* got, const double* reference, std::size_t documents, double tie) {
  double largest = 0;
  for (std::size_t i = 0; i < documents; ++i) largest = std::max(largest, std::abs(reference[i]));
  for (std::size_t a = 0; a < documents; ++a) {
    for (std::size_t b = 0; b < documents; ++b) {
      if (reference[a] - reference[b] > tie * largest && !(got[a] > got[b])) return false;
    }
  }
  return true;
}

}  // namespace

RankingComparison compare_ranking(const Tensor& got, const Tensor& reference,
                                  std::string_view dtype) {
  RankingComparison out;
  out.shape_error = incomparable(got, reference, "scores");
  if (!out.shape_error.empty()) return out;
  if (reference.shape.size() != 2 || reference.shape[1] < 2 || reference.shape[0] < 1) {
    out.shape_error =
        fmt::format("scores of shape [{}], not [queries, documents] with two or more documents",
                    fmt::join(reference.shape, ", "));
    return out;
  }
  out.queries = static_cast<std::size_t>(reference.shape[0]);
  out.documents = static_cast<std::size_t>(reference.shape[1]);
  const double tie = logits_tie_tolerance(dtype);
  for (std::size_t query = 0; query < out.queries; ++query) {
    const double* g = got.values.data() + query * out.documents;
    const double* r = reference.values.data() + query * out.documents;
    double difference = 0, norm = 0;
    for (std::size_t i = 0; i < out.documents; ++i) {
      difference += (g[i] - r[i]) * (g[i] - r[i]);
      norm += r[i] * r[i];
    }
    const double error = norm > 0 ? std::sqrt(difference / norm) : std::sqrt(difference);
    if (error > out.max_relative_error || (query == 0 && error >= out.max_relative_error)) {
      out.max_relative_error = error;
      out.worst = query;
    }
    if (!out.order_differs && !same_order(g, r, out.documents, tie)) {
      out.order_differs = query;
      out.order = ranked_documents(g, out.documents);
      out.reference_order = ranked_documents(r, out.documents);
    }
  }
  return out;
}

}  // namespace canrun::verify
