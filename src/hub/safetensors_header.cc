#include "hub/safetensors_header.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>

#include "core/text.h"

namespace canrun::hub {
namespace {

struct DtypeBits {
  std::string_view name;
  unsigned bits;
};

// The dtypes of safetensors' Rust `Dtype` enum (safetensors 0.6+).
constexpr std::array kDtypes = {
    DtypeBits{"BOOL", 8},    DtypeBits{"F4", 4},   DtypeBits{"F6_E2M3", 6}, DtypeBits{"F6_E3M2", 6},
    DtypeBits{"U8", 8},      DtypeBits{"I8", 8},   DtypeBits{"F8_E5M2", 8}, DtypeBits{"F8_E4M3", 8},
    DtypeBits{"F8_E8M0", 8}, DtypeBits{"I16", 16}, DtypeBits{"U16", 16},    DtypeBits{"F16", 16},
    DtypeBits{"BF16", 16},   DtypeBits{"I32", 32}, DtypeBits{"U32", 32},    DtypeBits{"F32", 32},
    DtypeBits{"C64", 64},    DtypeBits{"F64", 64}, DtypeBits{"I64", 64},    DtypeBits{"U64", 64},
};

Error bad_tensor(std::string_view name, std::string_view what) {
  return corrupt(fmt::format("safetensors header: tensor {}: {}", quote_for_message(name), what));
}

Result<std::uint64_t> as_u64(const nlohmann::json& value, std::string_view tensor,
                             std::string_view field) {
  if (!value.is_number_unsigned()) {
    return bad_tensor(tensor, fmt::format("{} holds {} where a non-negative integer belongs", field,
                                          value.type_name()));
  }
  return value.get<std::uint64_t>();
}

Result<TensorInfo> parse_tensor(const std::string& name, const nlohmann::json& entry) {
  if (!entry.is_object()) {
    return bad_tensor(name, fmt::format("entry is {}, not an object", entry.type_name()));
  }
  TensorInfo tensor;
  tensor.name = name;
  const auto dtype = entry.find("dtype");
  if (dtype == entry.end()) return bad_tensor(name, "no \"dtype\"");
  if (!dtype->is_string()) return bad_tensor(name, "\"dtype\" is not a string");
  tensor.dtype = dtype->get<std::string>();
  const auto bits = safetensors_dtype_bits(tensor.dtype);
  if (!bits) {
    return bad_tensor(name, fmt::format("unknown dtype {}", quote_for_message(tensor.dtype)));
  }
  const auto shape = entry.find("shape");
  if (shape == entry.end()) return bad_tensor(name, "no \"shape\"");
  if (!shape->is_array()) return bad_tensor(name, "\"shape\" is not an array");
  std::uint64_t elements = 1;
  bool overflow = false;
  for (const auto& dim : *shape) {
    CANRUN_ASSIGN_OR_RETURN(const std::uint64_t size, as_u64(dim, name, "a shape dimension"));
    tensor.shape.push_back(size);
    if (size != 0 && elements > UINT64_MAX / size) overflow = true;
    if (!overflow) elements *= size;
  }
  std::uint64_t total_bits = 0;
  if (overflow || __builtin_mul_overflow(elements, std::uint64_t{*bits}, &total_bits)) {
    return bad_tensor(
        name, fmt::format("shape {} has more elements than 64 bits can count", shape->dump()));
  }
  if (total_bits % 8 != 0) {
    return bad_tensor(
        name, fmt::format("{} elements of {} do not fill whole bytes", elements, tensor.dtype));
  }
  const auto offsets = entry.find("data_offsets");
  if (offsets == entry.end()) return bad_tensor(name, "no \"data_offsets\"");
  if (!offsets->is_array() || offsets->size() != 2) {
    return bad_tensor(name, "\"data_offsets\" is not an array [begin, end]");
  }
  CANRUN_ASSIGN_OR_RETURN(tensor.data_begin, as_u64((*offsets)[0], name, "data_offsets[0]"));
  CANRUN_ASSIGN_OR_RETURN(tensor.data_end, as_u64((*offsets)[1], name, "data_offsets[1]"));
  if (tensor.data_end < tensor.data_begin) {
    return bad_tensor(name, fmt::format("data_offsets [{}, {}] end before they begin",
                                        tensor.data_begin, tensor.data_end));
  }
  if (tensor.bytes() != total_bits / 8) {
    return bad_tensor(name, fmt::format("data_offsets [{}, {}] hold {} bytes but {} {} needs {}",
                                        tensor.data_begin, tensor.data_end, tensor.bytes(),
                                        shape->dump(), tensor.dtype, total_bits / 8));
  }
  return tensor;
}

}  // namespace

std::uint64_t SafetensorsHeader::data_bytes() const {
  std::uint64_t total = 0;
  for (const auto& tensor : tensors) total += tensor.bytes();
  return total;
}

std::optional<unsigned> safetensors_dtype_bits(std::string_view dtype) {
  for (const auto& known : kDtypes) {
    if (known.name == dtype) return known.bits;
  }
  return std::nullopt;
}

Result<std::uint64_t> parse_safetensors_prefix(std::string_view first_bytes,
                                               std::optional<std::uint64_t> file_size) {
  if (first_bytes.size() < 8) {
    return corrupt(
        fmt::format("safetensors file is {} bytes long, shorter than the 8-byte header length",
                    first_bytes.size()));
  }
  std::uint64_t length = 0;
  for (int byte_idx = 7; byte_idx >= 0; --byte_idx) {
    length = (length << 8) | static_cast<unsigned char>(first_bytes[byte_idx]);
  }
  if (length == 0) return corrupt("safetensors header length is 0");
  if (length > kMaxSafetensorsHeaderBytes) {
    return corrupt(fmt::format(
        "safetensors header declares {} bytes, over the {}-byte limit (not a safetensors file?)",
        length, kMaxSafetensorsHeaderBytes));
  }
  if (file_size && (*file_size < 8 || length > *file_size - 8)) {
    return corrupt(fmt::format(
        "safetensors header declares {} bytes but the file has only {} after the length", length,
        *file_size - 8));
  }
  return length;
}

Result<SafetensorsHeader> parse_safetensors_header(std::string_view header_json,
                                                   std::optional<std::uint64_t> file_size) {
  const auto json = nlohmann::json::parse(header_json, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) {
    return corrupt(fmt::format("safetensors header of {} bytes is not valid JSON (truncated?)",
                               header_json.size()));
  }
  if (!json.is_object()) {
    return corrupt(fmt::format("safetensors header is a JSON {}, not an object", json.type_name()));
  }
  SafetensorsHeader header;
  header.header_bytes = header_json.size();
  for (const auto& [name, entry] : json.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object()) return corrupt("safetensors header: __metadata__ is not an object");
      for (const auto& [key, value] : entry.items()) {
        if (!value.is_string()) {
          return corrupt(fmt::format("safetensors header: __metadata__ {} is not a string",
                                     quote_for_message(key)));
        }
        header.metadata[key] = value.get<std::string>();
      }
      continue;
    }
    CANRUN_ASSIGN_OR_RETURN(TensorInfo tensor, parse_tensor(name, entry));
    header.tensors.push_back(std::move(tensor));
  }
  std::sort(
      header.tensors.begin(), header.tensors.end(), [](const TensorInfo& a, const TensorInfo& b) {
        return a.data_begin != b.data_begin ? a.data_begin < b.data_begin : a.data_end < b.data_end;
      });
  // The format lays the tensors out back to back from offset 0 with no gap or overlap.
  std::uint64_t expected_begin = 0;
  for (const auto& tensor : header.tensors) {
    if (tensor.data_begin != expected_begin) {
      return bad_tensor(tensor.name,
                        fmt::format("data starts at {} but the previous tensor ends at {} "
                                    "(tensors overlap or leave a gap)",
                                    tensor.data_begin, expected_begin));
    }
    expected_begin = tensor.data_end;
  }
  if (file_size) {
    if (*file_size < 8 + header.header_bytes) {
      return corrupt(fmt::format("safetensors header of {} bytes does not fit in a {}-byte file",
                                 header.header_bytes, *file_size));
    }
    const std::uint64_t data_size = *file_size - 8 - header.header_bytes;
    if (expected_begin > data_size) {
      const auto& last = header.tensors.back();
      return bad_tensor(last.name,
                        fmt::format("data_offsets end at {}, outside the file's {} data bytes",
                                    last.data_end, data_size));
    }
    if (expected_begin < data_size) {
      return corrupt(
          fmt::format("safetensors header: tensors cover {} bytes but the file holds {} data bytes",
                      expected_begin, data_size));
    }
  }
  return header;
}

}  // namespace canrun::hub
