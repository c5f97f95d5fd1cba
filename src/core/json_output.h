// The one way canrun prints machine output for --json: pretty, stable key order (nlohmann's
// std::map ordering), and never throwing on text that is not valid UTF-8 (such bytes become
// U+FFFD), since error texts from crashed runs can contain anything.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>

namespace canrun {

//! `value` as JSON text, invalid UTF-8 replaced.
std::string to_json_text(const nlohmann::json& value, int indent = 2);

//! Writes `value` and a newline to `out`.
void print_json(std::ostream& out, const nlohmann::json& value);

//! The value, or null when there is none: a nullable column or field.
template <typename T>
nlohmann::json optional_json(const std::optional<T>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

}  // namespace canrun
