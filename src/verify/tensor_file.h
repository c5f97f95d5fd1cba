// The arrays a run.py writes beside its result line (outputs.safetensors: a task's logits, an
// image), read back for verification. Only what run.py writes is read: one named tensor of
// dtype F32, F16, BF16, F64, U8 or I64, whole, as doubles.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
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

//! The tensor `name` of the safetensors file at `path`. kNotFound when the file or the tensor is
//! missing; kCorrupt, naming the file, when it is not a safetensors file or the tensor's dtype
//! is not one listed above or its bytes disagree with its shape.
Result<Tensor> read_tensor(const std::filesystem::path& path, const std::string& name);

}  // namespace canrun::verify
