#include "core/text.h"

#include <fmt/format.h>

namespace canrun {

std::string quote_for_message(std::string_view text, std::size_t max_chars) {
  std::string out = "\"";
  std::size_t shown = 0;
  for (unsigned char byte : text) {
    if (shown == max_chars) break;
    ++shown;
    switch (byte) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (byte < 0x20 || byte >= 0x7f) {
          out += fmt::format("\\x{:02x}", byte);
        } else {
          out += static_cast<char>(byte);
        }
    }
  }
  out += '"';
  if (shown < text.size()) out += fmt::format("... ({} bytes in all)", text.size());
  return out;
}

std::string describe_byte(unsigned char byte) {
  switch (byte) {
    case '\0':
      return "NUL (0x00)";
    case '\n':
      return "newline (0x0a)";
    case '\r':
      return "carriage return (0x0d)";
    case '\t':
      return "tab (0x09)";
    case ' ':
      return "space (0x20)";
    default:
      break;
  }
  if (byte < 0x20 || byte == 0x7f) return fmt::format("control byte 0x{:02x}", byte);
  if (byte >= 0x80) return fmt::format("non-ASCII byte 0x{:02x}", byte);
  return fmt::format("'{}'", static_cast<char>(byte));
}

bool is_valid_utf8(std::string_view text) {
  std::size_t idx = 0;
  while (idx < text.size()) {
    const auto lead = static_cast<unsigned char>(text[idx]);
    std::size_t length = 0;
    char32_t code_point = 0;
    if (lead < 0x80) {
      ++idx;
      continue;
    } else if ((lead & 0xe0) == 0xc0) {
      length = 2;
      code_point = lead & 0x1f;
    } else if ((lead & 0xf0) == 0xe0) {
      length = 3;
      code_point = lead & 0x0f;
    } else if ((lead & 0xf8) == 0xf0) {
      length = 4;
      code_point = lead & 0x07;
    } else {
      return false;
    }
    if (idx + length > text.size()) return false;
    for (std::size_t offset = 1; offset < length; ++offset) {
      const auto continuation = static_cast<unsigned char>(text[idx + offset]);
      if ((continuation & 0xc0) != 0x80) return false;
      code_point = (code_point << 6) | (continuation & 0x3f);
    }
    static constexpr char32_t kSmallestOfLength[] = {0, 0, 0x80, 0x800, 0x10000};
    if (code_point < kSmallestOfLength[length] || code_point > 0x10ffff ||
        (code_point >= 0xd800 && code_point <= 0xdfff)) {
      return false;
    }
    idx += length;
  }
  return true;
}

}  // namespace canrun
