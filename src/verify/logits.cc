#include "verify/logits.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace canrun::verify {

double logits_relative_error_threshold(std::string_view dtype) {
  // Calibrated on the encoder fixtures (tests/fixtures/encoder_models.py) on the CPU,
  // TorchInductor against the eager reference; the figures are in the note of issue 18.
  if (dtype == "float32") return 1e-4;
  return 3e-2;  // bfloat16, float16
}

LogitsComparison compare_logits(const Tensor& got, const Tensor& reference,
                                std::string_view dtype) {
  LogitsComparison out;
  if (got.shape != reference.shape || got.values.size() != reference.values.size()) {
    out.shape_error = fmt::format("logits of shape [{}], the reference's [{}]",
                                  fmt::join(got.shape, ", "), fmt::join(reference.shape, ", "));
    return out;
  }
  const std::size_t width = reference.shape.empty() ? 0 : reference.row_size();
  if (width == 0) {
    out.shape_error = "no logits";
    return out;
  }
  const double threshold = logits_relative_error_threshold(dtype);
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
      if (g[i] > g[best] || std::isnan(g[i])) best = i;
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
    const bool tied = r[reference_best] - r[best] <= threshold * largest;
    if (best != reference_best && !tied && !out.argmax_differs) {
      out.argmax_differs = row;
      out.argmax = static_cast<std::int64_t>(best);
      out.reference_argmax = static_cast<std::int64_t>(reference_best);
    }
  }
  return out;
}

}  // namespace canrun::verify
