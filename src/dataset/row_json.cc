#include "dataset/row_json.h"

#include <fmt/format.h>

#include <limits>

#include "core/text.h"
#include "core/utc_time.h"
#include "core/verdict_result.h"
#include "dataset/schema.h"

namespace canrun::dataset {

std::string format_timestamp(Timestamp time) {
  return format_utc(time, UtcFraction::kMicroseconds);
}

nlohmann::json row_to_json(const VerdictRow& row) {
  nlohmann::json out = nlohmann::json::object();
  for (const ColumnSpec& column : verdict_columns()) {
    const std::string name(column.name);
    std::visit(
        [&](auto member) {
          const auto& value = row.*member;
          using Value = std::remove_cvref_t<decltype(value)>;
          if constexpr (std::is_same_v<Value, Timestamp>) {
            out[name] = format_timestamp(value);
          } else if constexpr (std::is_same_v<Value, VerdictResult>) {
            out[name] = to_string(value);
          } else if constexpr (std::is_same_v<Value, std::string> ||
                               std::is_same_v<Value, std::vector<std::string>>) {
            out[name] = value;
          } else {
            out[name] = value ? nlohmann::json(*value) : nlohmann::json(nullptr);
          }
        },
        column.member);
  }
  auto stack = nlohmann::json::parse(row.stack, nullptr, /*allow_exceptions=*/false);
  if (stack.is_object()) out["stack"] = std::move(stack);
  return out;
}

}  // namespace canrun::dataset

namespace canrun::dataset {

Result<Timestamp> parse_timestamp(std::string_view text) { return parse_utc(text); }

Result<VerdictRow> row_from_json(const nlohmann::json& object) {
  if (!object.is_object()) return invalid_argument("a verdict row must be a JSON object");
  VerdictRow row;
  for (const ColumnSpec& column : verdict_columns()) {
    const std::string name(column.name);
    const auto found = object.find(name);
    // A column added after the first version may be missing (a row from an older canrun).
    if (found == object.end() && column.since_version > 1) continue;
    if (found == object.end()) return invalid_argument(fmt::format("column {} is missing", name));
    const nlohmann::json& value = *found;
    auto wrong = [&](std::string_view expected) {
      return invalid_argument(
          fmt::format("column {} is {}, expected {}", name, value.type_name(), expected));
    };
    Status status = std::visit(
        [&](auto member) -> Status {
          auto& field = row.*member;
          using Value = std::remove_cvref_t<decltype(field)>;
          if constexpr (std::is_same_v<Value, std::string>) {
            if (name == "stack" && value.is_object()) {
              field = value.dump();
            } else if (!value.is_string()) {
              return wrong("a string");
            } else {
              field = value.get<std::string>();
            }
          } else if constexpr (std::is_same_v<Value, std::vector<std::string>>) {
            if (!value.is_array()) return wrong("an array of strings");
            for (const auto& item : value) {
              if (!item.is_string()) return wrong("an array of strings");
              field.push_back(item.get<std::string>());
            }
          } else if constexpr (std::is_same_v<Value, VerdictResult>) {
            if (!value.is_string()) return wrong("a string");
            const auto result = parse_verdict_result(value.get<std::string>());
            if (!result) {
              return invalid_argument(fmt::format("column {} is {}, not one of {}", name,
                                                  quote_for_message(value.get<std::string>()),
                                                  verdict_result_names()));
            }
            field = *result;
          } else if constexpr (std::is_same_v<Value, Timestamp>) {
            if (!value.is_string()) return wrong("an ISO 8601 string");
            CANRUN_ASSIGN_OR_RETURN(field, parse_timestamp(value.get<std::string>()));
          } else {
            using Inner = typename Value::value_type;
            if (value.is_null()) return ok_status();
            if constexpr (std::is_same_v<Inner, std::string>) {
              if (!value.is_string()) return wrong("a string or null");
              field = value.get<std::string>();
            } else if constexpr (std::is_same_v<Inner, double>) {
              if (!value.is_number()) return wrong("a number or null");
              field = value.get<double>();
            } else if constexpr (std::is_same_v<Inner, bool>) {
              if (!value.is_boolean()) return wrong("true, false or null");
              field = value.get<bool>();
            } else {
              if (!value.is_number_integer()) return wrong("an integer or null");
              const auto wide = value.get<std::int64_t>();
              if (wide < std::numeric_limits<Inner>::min() ||
                  wide > std::numeric_limits<Inner>::max()) {
                return wrong("an integer in range");
              }
              field = static_cast<Inner>(wide);
            }
          }
          return ok_status();
        },
        column.member);
    CANRUN_RETURN_IF_ERROR(status);
  }
  return row;
}

}  // namespace canrun::dataset
