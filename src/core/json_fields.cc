#include "core/json_fields.h"

#include <fmt/format.h>

namespace canrun {
namespace {

using nlohmann::json;

//! The field's value, or nullptr when it is absent or null (an optional field left unset).
const json* present_field(const json& object, std::string_view field) {
  const auto it = object.find(field);
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

//! An optional field read as `Value` when `accepts` it, else the type error naming `wanted`.
template <typename Value, typename Out>
Status read_present(const json& object, std::string_view where, std::string_view field,
                    std::string_view wanted, bool (*accepts)(const json&), Out& out) {
  const json* value = present_field(object, field);
  if (value == nullptr) return ok_status();
  if (!accepts(*value)) return json_field_type_error(where, field, *value, wanted);
  out = value->get<Value>();
  return ok_status();
}

bool is_string(const json& value) { return value.is_string(); }
bool is_boolean(const json& value) { return value.is_boolean(); }

}  // namespace

Error json_field_type_error(std::string_view where, std::string_view field, const json& value,
                            std::string_view wanted) {
  return corrupt(fmt::format("{}: field \"{}\" holds {} where {} belongs", where, field,
                             value.type_name(), wanted));
}

Status read_json_string(const json& object, std::string_view where, std::string_view field,
                        std::string& out) {
  return read_present<std::string>(object, where, field, "a string", is_string, out);
}

Status read_json_string(const json& object, std::string_view where, std::string_view field,
                        std::optional<std::string>& out) {
  return read_present<std::string>(object, where, field, "a string", is_string, out);
}

Status read_json_bool(const json& object, std::string_view where, std::string_view field,
                      bool& out) {
  return read_present<bool>(object, where, field, "true or false", is_boolean, out);
}

Status read_json_string_list(const json& object, std::string_view where, std::string_view field,
                             std::vector<std::string>& out) {
  const json* list = present_field(object, field);
  if (list == nullptr) return ok_status();
  constexpr std::string_view kWanted = "a list of strings";
  if (!list->is_array()) return json_field_type_error(where, field, *list, kWanted);
  std::vector<std::string> values;
  for (const json& item : *list) {
    if (!item.is_string()) return json_field_type_error(where, field, item, kWanted);
    values.push_back(item.get<std::string>());
  }
  out = std::move(values);
  return ok_status();
}

Status read_json_integer(const json& object, std::string_view where, std::string_view field,
                         std::int64_t& out) {
  return read_present<std::int64_t>(
      object, where, field, "an integer",
      [](const json& value) { return value.is_number_integer(); }, out);
}

Status read_json_count(const json& object, std::string_view where, std::string_view field,
                       std::optional<std::int64_t>& out) {
  // An unsigned value past INT64_MAX reads as negative, and is refused with the rest.
  return read_present<std::int64_t>(
      object, where, field, "a non-negative integer",
      [](const json& value) { return value.is_number_integer() && value.get<std::int64_t>() >= 0; },
      out);
}

Status read_json_number(const json& object, std::string_view where, std::string_view field,
                        double& out) {
  return read_present<double>(
      object, where, field, "a number", [](const json& value) { return value.is_number(); }, out);
}

Result<std::string> required_json_string(const json& object, std::string_view where,
                                         std::string_view field) {
  if (!object.contains(field)) return corrupt(fmt::format("{}: no field \"{}\"", where, field));
  const json& value = object.at(field);
  if (!value.is_string()) return json_field_type_error(where, field, value, "a string");
  return value.get<std::string>();
}

}  // namespace canrun
