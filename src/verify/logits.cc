#include "verify/logits.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace canrun::verify {

double logits_relative_error_threshold(std::string_view dtype) {
  // Measured on the encoder fixtures (tests/fixtures/encoder_models.py: BERT, RoBERTa,
  // DistilBERT classifiers; BERT, RoBERTa, XLM-R masked LMs; BERT, ELECTRA taggers) on the CPU,
  // TorchInductor against the eager reference (bench/calibrate_thresholds.py): float32 at most
  // 2.8e-6, bfloat16 at most 0.119 (random-weight classifiers' three small logits; the masked
  // LMs and taggers 0.02-0.06). float32: 1e-4, room for an accelerator's own summation orders;
  // bfloat16 and float16: 0.25, twice the worst seen.
  if (dtype == "float32") return 1e-4;
  return 0.25;
}

double logits_tie_tolerance(std::string_view dtype) {
  // float32 rounding moves a logit by ~1e-7 of the row; bfloat16 keeps 8 bits (0.4 %), and a
  // few layers of it move the close classes by a few percent.
  if (dtype == "float32") return 1e-4;
  return 0.05;
}

LogitsComparison compare_logits(const Tensor& got, const Tensor& reference,
                                std::string_view dtype) {
  LogitsComparison out;
  out.shape_error = incomparable(got, reference, "logits");
  if (!out.shape_error.empty()) return out;
  const std::size_t width = reference.shape.empty() ? 0 : reference.row_size();
  if (width == 0) {
    out.shape_error = "no logits";
    return out;
  }
  const double tie = logits_tie_tolerance(dtype);
  out.rows = reference.values.size() / width;
  for (std::size_t row = 0; row < out.rows; ++row) {
    const double* g = got.values.data() + row * width;
    const double* r = reference.values.data() + row * width;
    double difference = 0, norm = 0, largest = 0;
    std::size_t best = 0, reference_best = 0;
    for (std::size_t i = 0; i < width; ++i) {
      difference += (g[i] - r[i]) * (g[i] - r[i]);
      norm += r[i] * r[i];
      largest = std::max(largest, std::abs(r[i]));
      if (g[i] > g[best]) best = i;
      if (r[i] > r[reference_best]) reference_best = i;
    }
    // NaN never compares: a row holding one is as far from the reference as can be.
    const double error = std::isnan(difference) ? INFINITY
                         : norm > 0             ? std::sqrt(difference / norm)
                                                : std::sqrt(difference);
    if (error > out.max_relative_error || (row == 0 && error >= out.max_relative_error)) {
      out.max_relative_error = error;
      out.worst = row;
    }
    const bool tied = r[reference_best] - r[best] <= tie * largest;
    if (best != reference_best && !tied && !out.argmax_differs) {
      out.argmax_differs = row;
      out.argmax = static_cast<std::int64_t>(best);
      out.reference_argmax = static_cast<std::int64_t>(reference_best);
    }
  }
  return out;
}

}  // namespace canrun::verify
