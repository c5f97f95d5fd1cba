#include "recipe/python_literal.h"

#include <fmt/format.h>

#include "core/text.h"

namespace canrun::recipe {

Result<std::string> python_string(std::string_view text) {
  if (!is_valid_utf8(text)) {
    return invalid_argument(fmt::format("{} is not valid UTF-8", quote_for_message(text)));
  }
  std::string out = "\"";
  for (std::size_t idx = 0; idx < text.size();) {
    const auto byte = static_cast<unsigned char>(text[idx]);
    if (byte < 0x80) {
      if (byte == '"' || byte == '\\') {
        out += '\\';
        out += static_cast<char>(byte);
      } else if (byte >= 0x20 && byte < 0x7f) {
        out += static_cast<char>(byte);
      } else {
        out += fmt::format("\\x{:02x}", byte);
      }
      ++idx;
      continue;
    }
    // Decode one well-formed UTF-8 sequence (validated above) and write its code point.
    const std::size_t length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : 2;
    char32_t code_point = byte & (0x7f >> length);
    for (std::size_t offset = 1; offset < length; ++offset) {
      code_point = (code_point << 6) | (static_cast<unsigned char>(text[idx + offset]) & 0x3f);
    }
    out += code_point > 0xffff ? fmt::format("\\U{:08x}", static_cast<std::uint32_t>(code_point))
                               : fmt::format("\\u{:04x}", static_cast<std::uint32_t>(code_point));
    idx += length;
  }
  out += '"';
  return out;
}

Result<std::string> python_string_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (std::size_t idx = 0; idx < items.size(); ++idx) {
    CANRUN_ASSIGN_OR_RETURN(std::string literal, python_string(items[idx]));
    out += (idx == 0 ? "" : ", ") + literal;
  }
  return out + "]";
}

Result<std::string> python_bool_dict(const std::map<std::string, bool>& items) {
  std::string out = "{";
  bool first = true;
  for (const auto& [key, value] : items) {
    CANRUN_ASSIGN_OR_RETURN(std::string literal, python_string(key));
    out += fmt::format("{}{}: {}", first ? "" : ", ", literal, value ? "True" : "False");
    first = false;
  }
  return out + "}";
}

std::string docstring_text(std::string_view text) {
  std::string out;
  for (unsigned char byte : text) {
    out += (byte >= 0x20 && byte < 0x7f && byte != '\\' && byte != '"') ? static_cast<char>(byte)
                                                                        : '?';
  }
  return out;
}

}  // namespace canrun::recipe
