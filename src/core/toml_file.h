// toml++ parsing shared by the catalog readers and backend profiles: one place that turns a
// parse error into a Result naming the file and the line. Debian's toml++ is a shared library
// built with exceptions, so its parse_error is caught here, at the seam, and nowhere else.
#pragma once

#include <fmt/format.h>
#include <toml++/toml.h>

#include <string_view>

#include "core/result.h"

namespace canrun {

inline Result<toml::table> parse_toml(std::string_view text, std::string_view source_name) {
  try {
    return toml::parse(text, source_name);
  } catch (const toml::parse_error& error) {
    return invalid_argument(fmt::format("{}:{}:{}: {}", source_name, error.source().begin.line,
                                        error.source().begin.column, error.description()));
  }
}

//! "file:line" of a node, for messages.
inline std::string where(std::string_view source_name, const toml::node& node) {
  return fmt::format("{}:{}", source_name, node.source().begin.line);
}

}  // namespace canrun
