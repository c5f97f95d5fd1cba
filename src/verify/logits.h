// Verification of an encoder task (text-classification, fill-mask, token-classification)
// against the CPU reference: the logits run.py wrote, one row per sentence, token or masked
// token, must pick the reference's best class in every row (unless the reference itself was
// nearly tied there) and stay within the dtype's relative error of the reference's.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "verify/tensor_file.h"

namespace canrun::verify {

//! The largest relative error ‖got − reference‖ / ‖reference‖ of a row a PASS allows, per dtype
//! of the weights (see logits.cc for what it was calibrated on).
double logits_relative_error_threshold(std::string_view dtype);

//! A row's argmax may differ from the reference's only where the reference's logits of the two
//! classes are closer than this share of the row's largest magnitude: a near-tie that rounding
//! decides.
double logits_tie_tolerance(std::string_view dtype);

struct LogitsComparison {
  std::size_t rows = 0;
  double max_relative_error = 0;  //!< the worst row's
  std::size_t worst = 0;          //!< that row
  //! The first row whose argmax is not the reference's (beyond a near-tie); none: all agree.
  std::optional<std::size_t> argmax_differs;
  std::int64_t argmax = 0, reference_argmax = 0;  //!< in that row
  std::string shape_error;                        //!< set when the two cannot be compared at all
};

LogitsComparison compare_logits(const Tensor& got, const Tensor& reference, std::string_view dtype);

}  // namespace canrun::verify
