// Typed reads of one JSON object's fields, for the JSON that canrun reads but does not
// control: the Hub's answers, config.json, snapshot files. Every error is kCorrupt and says
// where the object came from, which field, what it held and what belongs there:
//   Hub model info: field "tags" holds string where a list of strings belongs
//
// The read_* functions are for optional fields: an absent or null field leaves `out` as it
// was, a field of another type is an error (and leaves `out` as it was too).
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace canrun {

//! "WHERE: field "FIELD" holds TYPE where WANTED belongs", for checks the readers below do
//! not cover (WANTED: "a string", "false, \"auto\" or \"manual\"").
Error json_field_type_error(std::string_view where, std::string_view field,
                            const nlohmann::json& value, std::string_view wanted);

//! A string field.
[[nodiscard]] Status read_json_string(const nlohmann::json& object, std::string_view where,
                                      std::string_view field, std::string& out);
[[nodiscard]] Status read_json_string(const nlohmann::json& object, std::string_view where,
                                      std::string_view field, std::optional<std::string>& out);
//! A boolean field ("true or false").
[[nodiscard]] Status read_json_bool(const nlohmann::json& object, std::string_view where,
                                    std::string_view field, bool& out);
//! A list of strings; replaces `out` whole.
[[nodiscard]] Status read_json_string_list(const nlohmann::json& object, std::string_view where,
                                           std::string_view field, std::vector<std::string>& out);
//! Any integer ("an integer").
[[nodiscard]] Status read_json_integer(const nlohmann::json& object, std::string_view where,
                                       std::string_view field, std::int64_t& out);
//! An integer >= 0 ("a non-negative integer"): a count of heads, experts.
[[nodiscard]] Status read_json_count(const nlohmann::json& object, std::string_view where,
                                     std::string_view field, std::optional<std::int64_t>& out);
//! Any number, integer or not ("a number").
[[nodiscard]] Status read_json_number(const nlohmann::json& object, std::string_view where,
                                      std::string_view field, double& out);

//! A string field that must be there: "WHERE: no field "FIELD"" when it is absent.
[[nodiscard]] Result<std::string> required_json_string(const nlohmann::json& object,
                                                       std::string_view where,
                                                       std::string_view field);

}  // namespace canrun
