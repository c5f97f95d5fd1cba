// libFuzzer target: a whole .safetensors file's leading bytes → the header parser. Any input
// must end in a header or a Result error; never a crash, a sanitizer report or a throw.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "hub/safetensors_header.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view file(reinterpret_cast<const char*>(data), size);
  for (const bool size_known : {true, false}) {
    const std::optional<std::uint64_t> file_size =
        size_known ? std::optional<std::uint64_t>(size) : std::nullopt;
    auto length = canrun::hub::parse_safetensors_prefix(file, file_size);
    if (!length.ok()) continue;
    const std::string_view header = file.substr(8, *length);
    auto parsed = canrun::hub::parse_safetensors_header(header, file_size);
    if (parsed.ok()) {
      std::uint64_t total = 0;
      for (const auto& tensor : parsed->tensors) total += tensor.bytes();
      if (total != parsed->data_bytes()) __builtin_trap();
      if (file_size && 8 + *length + total != size) __builtin_trap();
    }
  }
  return 0;
}
