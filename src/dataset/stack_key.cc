#include "dataset/stack_key.h"

#include <fmt/format.h>

#include <cctype>

#include "core/text.h"

namespace canrun::dataset {
namespace {

constexpr std::size_t kMaxPartLength = 128;

Status check_name(std::string_view name, std::string_view what) {
  if (name.empty()) return invalid_argument(fmt::format("stack {} is empty", what));
  if (name.size() > kMaxPartLength) {
    return invalid_argument(fmt::format("stack {} {} is longer than {} characters", what,
                                        quote_for_message(name, 40), kMaxPartLength));
  }
  for (unsigned char byte : name) {
    if (!(std::islower(byte) || std::isdigit(byte) || byte == '-' || byte == '_')) {
      return invalid_argument(fmt::format("stack {} {}: {} is not allowed; use a-z, 0-9, '-', '_'",
                                          what, quote_for_message(name), describe_byte(byte)));
    }
  }
  if (name.find("__") != std::string_view::npos ||
      !std::isalnum(static_cast<unsigned char>(name.front())) ||
      !std::isalnum(static_cast<unsigned char>(name.back()))) {
    return invalid_argument(
        fmt::format("stack {} {} must start and end with a letter or digit and hold no \"__\"",
                    what, quote_for_message(name)));
  }
  return ok_status();
}

Status check_version(std::string_view version, std::string_view what) {
  if (version.empty()) return invalid_argument(fmt::format("stack {} is empty", what));
  if (version.size() > kMaxPartLength) {
    return invalid_argument(fmt::format("stack {} {} is longer than {} characters", what,
                                        quote_for_message(version, 40), kMaxPartLength));
  }
  for (unsigned char byte : version) {
    if (byte < 0x20 || byte >= 0x7f) {
      return invalid_argument(fmt::format("stack {} {}: {} is not allowed", what,
                                          quote_for_message(version), describe_byte(byte)));
    }
  }
  return ok_status();
}

bool keeps_raw(unsigned char byte) { return std::isalnum(byte) || byte == '.' || byte == '+'; }

//! Splits "<name>-<escaped version>" at the last '-'.
Result<std::pair<std::string, std::string>> split_name_version(std::string_view part,
                                                               std::string_view what) {
  const std::size_t dash = part.rfind('-');
  if (dash == std::string_view::npos || dash == 0 || dash + 1 == part.size()) {
    return invalid_argument(
        fmt::format("{} part {} is not <name>-<version>", what, quote_for_message(part)));
  }
  CANRUN_ASSIGN_OR_RETURN(std::string version, unescape_version(part.substr(dash + 1)));
  return std::pair{std::string(part.substr(0, dash)), std::move(version)};
}

}  // namespace

std::string escape_version(std::string_view version) {
  std::string out;
  out.reserve(version.size());
  for (unsigned char byte : version) {
    if (keeps_raw(byte)) {
      out += static_cast<char>(byte);
    } else {
      out += fmt::format("%{:02X}", byte);
    }
  }
  return out;
}

Result<std::string> unescape_version(std::string_view escaped) {
  std::string out;
  for (std::size_t idx = 0; idx < escaped.size(); ++idx) {
    const auto byte = static_cast<unsigned char>(escaped[idx]);
    if (byte == '%') {
      if (idx + 2 >= escaped.size()) {
        return invalid_argument(
            fmt::format("version {} ends inside a %XX escape", quote_for_message(escaped)));
      }
      const std::string hex(escaped.substr(idx + 1, 2));
      if (!std::isxdigit(static_cast<unsigned char>(hex[0])) ||
          !std::isxdigit(static_cast<unsigned char>(hex[1]))) {
        return invalid_argument(
            fmt::format("version {} has a bad %XX escape", quote_for_message(escaped)));
      }
      const auto decoded = static_cast<unsigned char>(std::stoi(hex, nullptr, 16));
      if (keeps_raw(decoded)) {
        return invalid_argument(fmt::format("version {} escapes {} which is written as it is",
                                            quote_for_message(escaped), describe_byte(decoded)));
      }
      out += static_cast<char>(decoded);
      idx += 2;
    } else if (keeps_raw(byte)) {
      out += static_cast<char>(byte);
    } else {
      return invalid_argument(fmt::format("version {}: {} must be written as %XX",
                                          quote_for_message(escaped), describe_byte(byte)));
    }
  }
  return out;
}

Result<StackKey> StackKey::make(std::string backend, std::string compiler,
                                std::string compiler_version, std::string library,
                                std::string library_version) {
  CANRUN_RETURN_IF_ERROR(check_name(backend, "backend"));
  CANRUN_RETURN_IF_ERROR(check_name(compiler, "compiler"));
  CANRUN_RETURN_IF_ERROR(check_version(compiler_version, "compiler version"));
  CANRUN_RETURN_IF_ERROR(check_name(library, "library"));
  CANRUN_RETURN_IF_ERROR(check_version(library_version, "library version"));
  return StackKey{std::move(backend), std::move(compiler), std::move(compiler_version),
                  std::move(library), std::move(library_version)};
}

Result<StackKey> StackKey::parse(std::string_view text) {
  std::string_view stem = text;
  if (stem.ends_with(".parquet")) stem.remove_suffix(std::string_view(".parquet").size());
  auto refuse = [&](const Error& why) {
    return invalid_argument(fmt::format(
        "{} is not a stack name <backend>__<compiler>-<version>__<library>-<version>: {}",
        quote_for_message(text), why.message()));
  };
  const std::size_t first = stem.find("__");
  const std::size_t second = first == std::string_view::npos ? first : stem.find("__", first + 2);
  if (second == std::string_view::npos || stem.find("__", second + 2) != std::string_view::npos) {
    return refuse(invalid_argument("it needs exactly two \"__\" separators"));
  }
  auto compiler = split_name_version(stem.substr(first + 2, second - first - 2), "compiler");
  if (!compiler.ok()) return refuse(compiler.error());
  auto library = split_name_version(stem.substr(second + 2), "library");
  if (!library.ok()) return refuse(library.error());
  auto key = make(std::string(stem.substr(0, first)), compiler->first, compiler->second,
                  library->first, library->second);
  if (!key.ok()) return refuse(key.error());
  return key;
}

std::string StackKey::stem() const {
  return fmt::format("{}__{}-{}__{}-{}", backend, compiler, escape_version(compiler_version),
                     library, escape_version(library_version));
}

std::string StackKey::display() const {
  return fmt::format("{} · {} {} · {} {}", backend, compiler, compiler_version, library,
                     library_version);
}

}  // namespace canrun::dataset
