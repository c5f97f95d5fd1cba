// The arrays a run.py writes beside its result line (outputs.safetensors: a task's logits, an
// image), read back for verification. Only what run.py writes is read: one named tensor of
// dtype F32, F16, BF16, F64, U8 or I64, whole, as doubles.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace canrun::verify {

struct Tensor {
  std::vector<std::int64_t> shape;
  std::vector<double> values;  //!< row-major
  std::int64_t rows() const { return shape.empty() ? 0 : shape.front(); }
  //! Values per row (the product of the shape after the first dimension).
  std::size_t row_size() const;
};

//! Why the run's tensor cannot be compared with the reference's, in words naming `what` the two
//! hold ("logits of shape [2, 3], the reference's [2, 4]"; "they hold NaN or infinite values
//! (1 of 6)"), or empty when they have the same shape and the run's values are all finite.
std::string incomparable(const Tensor& got, const Tensor& reference, std::string_view what);

//! The tensor `name` of the safetensors file at `path`. kNotFound when the file or the tensor is
//! missing; kCorrupt, naming the file, when it is not a safetensors file or the tensor's dtype
//! is not one listed above or its bytes disagree with its shape.
Result<Tensor> read_tensor(const std::filesystem::path& path, const std::string& name);

}  // namespace canrun::verify
