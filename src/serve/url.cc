#include "serve/url.h"

#include <fmt/format.h>

#include <cctype>

#include "core/text.h"

namespace canrun::serve {
namespace {

int hex_value(char digit) {
  if (digit >= '0' && digit <= '9') return digit - '0';
  if (digit >= 'a' && digit <= 'f') return digit - 'a' + 10;
  if (digit >= 'A' && digit <= 'F') return digit - 'A' + 10;
  return -1;
}

}  // namespace

Result<std::string> percent_decode(std::string_view text, bool plus_as_space) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t pos = 0; pos < text.size(); ++pos) {
    const char byte = text[pos];
    if (byte == '%') {
      const int high = pos + 2 < text.size() ? hex_value(text[pos + 1]) : -1;
      const int low = pos + 2 < text.size() ? hex_value(text[pos + 2]) : -1;
      if (high < 0 || low < 0) {
        return invalid_argument(
            fmt::format("bad percent-escape {}", quote_for_message(text.substr(pos, 3))));
      }
      out.push_back(static_cast<char>(high * 16 + low));
      pos += 2;
    } else if (byte == '+' && plus_as_space) {
      out.push_back(' ');
    } else {
      out.push_back(byte);
    }
  }
  if (!is_valid_utf8(out)) return invalid_argument("decoded text is not valid UTF-8");
  for (const char byte : out) {
    if (static_cast<unsigned char>(byte) < 0x20 || byte == 0x7f) {
      return invalid_argument(fmt::format("decoded text holds the control byte {}",
                                          describe_byte(static_cast<unsigned char>(byte))));
    }
  }
  return out;
}

Result<RequestTarget> parse_target(std::string_view target) {
  if (!target.starts_with('/')) {
    return invalid_argument(
        fmt::format("request target {} does not start with '/'", quote_for_message(target)));
  }
  const std::size_t question = target.find('?');
  RequestTarget out;
  auto path = percent_decode(target.substr(0, question), /*plus_as_space=*/false);
  if (!path.ok()) return path.error().with_context("path");
  out.path = std::move(*path);
  for (std::size_t start = 1; start <= out.path.size();) {
    std::size_t end = out.path.find('/', start);
    if (end == std::string::npos) end = out.path.size();
    const std::string_view segment = std::string_view(out.path).substr(start, end - start);
    if (segment == "." || segment == ".." || segment.find('\\') != std::string_view::npos) {
      return invalid_argument(
          fmt::format("path {} has a \".\", \"..\" or '\\' segment", quote_for_message(out.path)));
    }
    start = end + 1;
  }
  if (question == std::string_view::npos) return out;
  std::string_view query = target.substr(question + 1);
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty()) continue;
    const std::size_t equals = pair.find('=');
    auto name = percent_decode(pair.substr(0, equals), true);
    if (!name.ok()) return name.error().with_context("query parameter name");
    auto value = percent_decode(
        equals == std::string_view::npos ? std::string_view() : pair.substr(equals + 1), true);
    if (!value.ok()) {
      return value.error().with_context(
          fmt::format("query parameter {}", quote_for_message(*name)));
    }
    if (!out.query.emplace(*name, std::move(*value)).second) {
      return invalid_argument(
          fmt::format("query parameter {} is given more than once", quote_for_message(*name)));
    }
  }
  return out;
}

std::string percent_encode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char byte : text) {
    const auto value = static_cast<unsigned char>(byte);
    if (std::isalnum(value) || byte == '-' || byte == '.' || byte == '_' || byte == '~') {
      out.push_back(byte);
    } else {
      out += {'%', kHex[value >> 4], kHex[value & 15]};
    }
  }
  return out;
}

}  // namespace canrun::serve
