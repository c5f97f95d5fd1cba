#include "verify/tensor_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

namespace canrun::verify {
namespace {

//! The largest outputs file read: run.py's outputs are logits and one image, not weights.
constexpr std::uint64_t kMaxOutputsBytes = std::uint64_t{1} << 31;

std::uint64_t little_endian(const unsigned char* bytes, int count) {
  std::uint64_t value = 0;
  for (int i = count - 1; i >= 0; --i) value = (value << 8) | bytes[i];
  return value;
}

double half_to_double(std::uint16_t half) {
  const int exponent = (half >> 10) & 0x1f;
  const int mantissa = half & 0x3ff;
  const double sign = (half & 0x8000) ? -1.0 : 1.0;
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);
  if (exponent == 31) return mantissa ? std::nan("") : sign * INFINITY;
  return sign * std::ldexp(mantissa + 1024, exponent - 25);
}

Result<double> element(const std::string& dtype, const unsigned char* bytes) {
  if (dtype == "F32") {
    return static_cast<double>(
        std::bit_cast<float>(static_cast<std::uint32_t>(little_endian(bytes, 4))));
  }
  if (dtype == "F64") return std::bit_cast<double>(little_endian(bytes, 8));
  if (dtype == "BF16") {
    return static_cast<double>(
        std::bit_cast<float>(static_cast<std::uint32_t>(little_endian(bytes, 2) << 16)));
  }
  if (dtype == "F16") return half_to_double(static_cast<std::uint16_t>(little_endian(bytes, 2)));
  if (dtype == "U8") return static_cast<double>(bytes[0]);
  if (dtype == "I64")
    return static_cast<double>(static_cast<std::int64_t>(little_endian(bytes, 8)));
  return corrupt(fmt::format("dtype {} is not read", dtype));
}

int element_bytes(const std::string& dtype) {
  if (dtype == "F64" || dtype == "I64") return 8;
  if (dtype == "F32") return 4;
  if (dtype == "BF16" || dtype == "F16") return 2;
  return dtype == "U8" ? 1 : 0;
}

}  // namespace

std::size_t Tensor::row_size() const {
  std::size_t size = 1;
  for (std::size_t i = 1; i < shape.size(); ++i) size *= static_cast<std::size_t>(shape[i]);
  return size;
}

Result<Tensor> read_tensor(const std::filesystem::path& path, const std::string& name) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return not_found(fmt::format("{} does not exist or cannot be read", path.string()));
  const auto bad = [&](std::string_view why) {
    return corrupt(fmt::format("{} is not a readable safetensors file: {}", path.string(), why));
  };
  unsigned char prefix[8];
  if (!file.read(reinterpret_cast<char*>(prefix), 8)) return bad("shorter than 8 bytes");
  const std::uint64_t header_bytes = little_endian(prefix, 8);
  std::error_code error;
  const std::uint64_t size = std::filesystem::file_size(path, error);
  if (error || size > kMaxOutputsBytes || header_bytes > size - 8) return bad("its header length");
  std::string header(header_bytes, '\0');
  if (!file.read(header.data(), static_cast<std::streamsize>(header_bytes))) return bad("short");
  const auto json = nlohmann::json::parse(header, nullptr, false);
  if (!json.is_object()) return bad("the header is not a JSON object");
  const auto found = json.find(name);
  if (found == json.end()) {
    return not_found(fmt::format("{} has no tensor {}", path.string(), name));
  }
  if (!found->is_object() || !found->contains("dtype") || !(*found)["dtype"].is_string() ||
      !found->contains("shape") || !found->contains("data_offsets")) {
    return bad(fmt::format("tensor {} lacks dtype, shape or data_offsets", name));
  }
  const std::string dtype = (*found)["dtype"].get<std::string>();
  const int width = element_bytes(dtype);
  if (width == 0)
    return bad(fmt::format("tensor {} has dtype {}, which canrun does not read", name, dtype));
  Tensor tensor;
  std::uint64_t count = 1;
  for (const auto& dimension : (*found)["shape"]) {
    if (!dimension.is_number_unsigned()) return bad("a shape that is not natural numbers");
    tensor.shape.push_back(dimension.get<std::int64_t>());
    count *= dimension.get<std::uint64_t>();
    if (count > size) return bad(fmt::format("tensor {}'s shape exceeds the file", name));
  }
  const auto& offsets = (*found)["data_offsets"];
  if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
      !offsets[1].is_number_unsigned()) {
    return bad("data_offsets are not two natural numbers");
  }
  const std::uint64_t begin = offsets[0].get<std::uint64_t>();
  const std::uint64_t end = offsets[1].get<std::uint64_t>();
  if (end < begin || end - begin != count * static_cast<std::uint64_t>(width) ||
      8 + header_bytes + end > size) {
    return bad(fmt::format("tensor {}'s bytes disagree with its shape", name));
  }
  std::vector<unsigned char> bytes(end - begin);
  file.seekg(static_cast<std::streamoff>(8 + header_bytes + begin));
  if (!file.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size())))
    return bad("short data");
  tensor.values.resize(count);
  if (dtype == "U8") {  // an image: the common large case, converted without a dispatch each
    std::copy(bytes.begin(), bytes.end(), tensor.values.begin());
    return tensor;
  }
  for (std::uint64_t i = 0; i < count; ++i) {
    CANRUN_ASSIGN_OR_RETURN(tensor.values[i], element(dtype, bytes.data() + i * width));
  }
  return tensor;
}

std::string incomparable(const Tensor& got, const Tensor& reference, std::string_view what) {
  if (got.shape != reference.shape || got.values.size() != reference.values.size()) {
    return fmt::format("{} of shape [{}], the reference's [{}]", what, fmt::join(got.shape, ", "),
                       fmt::join(reference.shape, ", "));
  }
  const auto not_finite = std::count_if(got.values.begin(), got.values.end(),
                                        [](double value) { return !std::isfinite(value); });
  if (not_finite == 0) return {};
  return fmt::format("they hold NaN or infinite values ({} of {})", not_finite, got.values.size());
}

}  // namespace canrun::verify
