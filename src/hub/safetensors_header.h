// The safetensors header: the JSON table at the start of a .safetensors file that names every
// tensor with its dtype, shape and byte range. canrun reads only this header (never the
// weights) to learn a checkpoint's size, so the parser takes hostile input: every length,
// shape and offset is checked against the format's rules and against the file's size.
//
// Format (github.com/huggingface/safetensors, README "Format"): 8 bytes little-endian u64 N,
// then N bytes of UTF-8 JSON {"__metadata__": {str: str}, NAME: {"dtype": D, "shape": [..],
// "data_offsets": [BEGIN, END]}, ...}, then the data; offsets are relative to the data start.
//
// Thread safety: free functions on values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace canrun::hub {

//! Headers larger than this are refused before any of them is read (huggingface_hub itself
//! caps at 25 MB; a real header of a 1 T-parameter checkpoint is a few MB).
inline constexpr std::uint64_t kMaxSafetensorsHeaderBytes = 100'000'000;

//! One tensor entry of a header.
struct TensorInfo {
  std::string name;                  //!< the tensor's name in the checkpoint
  std::string dtype;                 //!< safetensors dtype name: "BF16", "F32", "F8_E4M3", ...
  std::vector<std::uint64_t> shape;  //!< dimensions; empty for a scalar
  std::uint64_t data_begin = 0;      //!< first byte, relative to the data section
  std::uint64_t data_end = 0;        //!< one past the last byte, relative to the data section
  std::uint64_t bytes() const { return data_end - data_begin; }
};

//! A parsed header: the tensors in file order of their data, and the free-form metadata.
struct SafetensorsHeader {
  std::vector<TensorInfo> tensors;
  std::map<std::string, std::string> metadata;  //!< "__metadata__", e.g. {"format": "pt"}
  std::uint64_t header_bytes = 0;               //!< N, the JSON's length
  std::uint64_t data_bytes() const;             //!< sum of the tensors' byte ranges
};

//! Size in bits of one element of a safetensors dtype; nullopt for a name the format lacks.
std::optional<unsigned> safetensors_dtype_bits(std::string_view dtype);

//! Reads N from the first 8 bytes of a file of `file_size` bytes (nullopt: size unknown);
//! errors when the prefix is short, N is 0, over kMaxSafetensorsHeaderBytes, or past the file.
Result<std::uint64_t> parse_safetensors_prefix(std::string_view first_bytes,
                                               std::optional<std::uint64_t> file_size);

//! Parses the N header bytes. `file_size`, when known, bounds the tensors' data ranges.
//! Errors (kCorrupt, naming the tensor): malformed JSON or not an object, a field missing or
//! of the wrong type, an unknown dtype, a shape whose element count or byte size overflows
//! 64 bits, a byte range whose length disagrees with dtype × shape, ranges that overlap or run
//! past the file.
Result<SafetensorsHeader> parse_safetensors_header(std::string_view header_json,
                                                   std::optional<std::uint64_t> file_size);

}  // namespace canrun::hub
