#include "core/text.h"

#include <fmt/format.h>

#include <algorithm>

namespace canrun {
namespace {
std::size_t valid_sequence_length(std::string_view text, std::size_t idx);
}  // namespace

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

std::string quote_whole(std::string_view text) { return quote_for_message(text, 1024); }

std::string quote_for_display(std::string_view text, std::size_t max_bytes) {
  std::string out = "\"";
  std::size_t idx = 0;
  while (idx < text.size() && idx < max_bytes) {
    const std::size_t length = valid_sequence_length(text, idx);
    if (length > 1) {
      out.append(text.substr(idx, length));
      idx += length;
      continue;
    }
    out += quote_for_message(text.substr(idx, 1)).substr(1, std::string::npos);
    out.pop_back();  // the closing quote quote_for_message added
    ++idx;
  }
  out += '"';
  if (idx < text.size()) out += fmt::format("... ({} bytes in all)", text.size());
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

namespace {

//! Length of the well-formed UTF-8 sequence starting at `idx`, or 0 if there is none.
std::size_t valid_sequence_length(std::string_view text, std::size_t idx) {
  const auto lead = static_cast<unsigned char>(text[idx]);
  std::size_t length = 0;
  char32_t code_point = 0;
  if (lead < 0x80) {
    return 1;
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
    return 0;
  }
  if (idx + length > text.size()) return 0;
  for (std::size_t offset = 1; offset < length; ++offset) {
    const auto continuation = static_cast<unsigned char>(text[idx + offset]);
    if ((continuation & 0xc0) != 0x80) return 0;
    code_point = (code_point << 6) | (continuation & 0x3f);
  }
  static constexpr char32_t kSmallestOfLength[] = {0, 0, 0x80, 0x800, 0x10000};
  if (code_point < kSmallestOfLength[length] || code_point > 0x10ffff ||
      (code_point >= 0xd800 && code_point <= 0xdfff)) {
    return 0;
  }
  return length;
}

}  // namespace

bool is_valid_utf8(std::string_view text) {
  for (std::size_t idx = 0; idx < text.size();) {
    const std::size_t length = valid_sequence_length(text, idx);
    if (length == 0) return false;
    idx += length;
  }
  return true;
}

std::string make_valid_utf8(std::string_view text) {
  if (is_valid_utf8(text)) return std::string(text);
  std::string out;
  out.reserve(text.size() + 16);
  for (std::size_t idx = 0; idx < text.size();) {
    const std::size_t length = valid_sequence_length(text, idx);
    if (length == 0) {
      out += "\xEF\xBF\xBD";
      ++idx;
    } else {
      out.append(text.substr(idx, length));
      idx += length;
    }
  }
  return out;
}

std::size_t utf8_boundary_at_or_before(std::string_view text, std::size_t pos) {
  if (pos >= text.size()) return text.size();
  while (pos > 0 && (static_cast<unsigned char>(text[pos]) & 0xc0) == 0x80) --pos;
  return pos;
}

std::string keep_tail(std::string text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  std::size_t start = text.size() - max_bytes;
  while (start < text.size() && (static_cast<unsigned char>(text[start]) & 0xc0) == 0x80) ++start;
  return fmt::format("[canrun: {} bytes cut from the start]\n{}", start,
                     std::string_view(text).substr(start));
}

}  // namespace canrun

namespace canrun {

std::string format_bytes(std::int64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  if (bytes < 1024) return fmt::format("{} B", bytes);
  double value = static_cast<double>(bytes);
  std::size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(kUnits)) {
    value /= 1024;
    ++unit;
  }
  return fmt::format("{:.1f} {}", value, kUnits[unit]);
}

std::string ascii_lower(std::string_view text) {
  std::string out(text);
  for (char& byte : out) byte = static_cast<char>(std::tolower(static_cast<unsigned char>(byte)));
  return out;
}

std::uint64_t fnv1a(std::string_view text) {
  std::uint64_t hash = 1469598103934665603ULL;
  for (unsigned char byte : text) hash = (hash ^ byte) * 1099511628211ULL;
  return hash;
}

std::vector<std::string> split_list(std::string_view text) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    if (comma > start) parts.emplace_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return parts;
}

}  // namespace canrun
