#include "verify/embeddings.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace canrun::verify {
namespace {

//! The documents (indices from `queries` on) nearest to `query`, nearest first, at most
//! kNeighboursCompared of them.
std::vector<std::size_t> nearest(const Embeddings& embeddings, std::size_t query,
                                 std::size_t queries) {
  std::vector<std::size_t> documents(embeddings.size() - queries);
  std::iota(documents.begin(), documents.end(), queries);
  std::vector<double> similarity(embeddings.size());
  for (const std::size_t at : documents) similarity[at] = cosine(embeddings[query], embeddings[at]);
  const std::size_t kept = std::min(kNeighboursCompared, documents.size());
  std::partial_sort(documents.begin(), documents.begin() + static_cast<std::ptrdiff_t>(kept),
                    documents.end(),
                    [&](std::size_t a, std::size_t b) { return similarity[a] > similarity[b]; });
  documents.resize(kept);
  return documents;
}

}  // namespace

double embedding_cosine_threshold(std::string_view dtype) {
  return dtype == "float32" || dtype == "float64" ? 0.99999 : 0.999;
}

double cosine(const std::vector<double>& a, const std::vector<double>& b) {
  double dot = 0, aa = 0, bb = 0;
  for (std::size_t at = 0; at < std::min(a.size(), b.size()); ++at) {
    dot += a[at] * b[at];
    aa += a[at] * a[at];
    bb += b[at] * b[at];
  }
  if (aa == 0 || bb == 0) return aa == bb ? 1.0 : 0.0;  // two zero vectors point alike
  return dot / std::sqrt(aa * bb);
}

EmbeddingComparison compare_embeddings(const Embeddings& got, const Embeddings& reference,
                                       std::size_t queries) {
  EmbeddingComparison out;
  if (got.size() != reference.size() || reference.empty()) {
    out.shape_error =
        fmt::format("{} embeddings, the CPU reference has {}", got.size(), reference.size());
    return out;
  }
  for (std::size_t at = 0; at < got.size(); ++at) {
    if (got[at].size() != reference[at].size()) {
      out.shape_error = fmt::format("sentence {}'s embedding has {} values, the CPU reference's {}",
                                    at + 1, got[at].size(), reference[at].size());
      return out;
    }
    if (const auto not_finite = std::count_if(got[at].begin(), got[at].end(),
                                              [](double value) { return !std::isfinite(value); })) {
      out.shape_error =
          fmt::format("sentence {}'s embedding holds NaN or infinite values ({} of {})", at + 1,
                      not_finite, got[at].size());
      return out;
    }
  }
  out.min_cosine = 2;
  for (std::size_t at = 0; at < got.size(); ++at) {
    const double similarity = cosine(got[at], reference[at]);
    if (similarity < out.min_cosine) {
      out.min_cosine = similarity;
      out.worst = at;
    }
  }
  for (std::size_t query = 0; query < std::min(queries, got.size()); ++query) {
    if (nearest(got, query, queries) != nearest(reference, query, queries)) {
      out.query_differs = query;
      break;
    }
  }
  return out;
}

}  // namespace canrun::verify
