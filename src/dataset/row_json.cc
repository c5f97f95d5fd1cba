#include "dataset/row_json.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <cctype>
#include <cstdio>
#include <limits>

#include "core/text.h"
#include "core/verdict_result.h"
#include "dataset/schema.h"

namespace canrun::dataset {

std::string format_timestamp(Timestamp time) {
  const auto seconds = std::chrono::floor<std::chrono::seconds>(time);
  const auto micros = (time - seconds).count();
  return fmt::format("{:%Y-%m-%dT%H:%M:%S}.{:06d}Z", seconds, micros);
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

Result<Timestamp> parse_timestamp(std::string_view text) {
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  char tail[16] = {};
  const std::string copy(text);
  const int fields = std::sscanf(copy.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%15s", &year, &month, &day,
                                 &hour, &minute, &second, tail);
  std::string_view rest = tail;
  std::int64_t micros = 0;
  bool good = fields == 7 && month >= 1 && month <= 12 && day >= 1 && day <= 31 && hour < 24 &&
              minute < 60 && second < 61;
  if (good && rest.starts_with('.')) {
    rest.remove_prefix(1);
    std::size_t digits = 0;
    while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits]))) {
      micros = micros * 10 + (rest[digits] - '0');
      ++digits;
    }
    good = digits >= 1 && digits <= 6;
    for (std::size_t pad = digits; pad < 6; ++pad) micros *= 10;
    rest.remove_prefix(digits);
  }
  if (!good || rest != "Z") {
    return invalid_argument(fmt::format(
        "timestamp {} is not ISO 8601 UTC like 2026-12-02T15:24:00Z", quote_for_message(text)));
  }
  const std::chrono::year_month_day date{std::chrono::year(year), std::chrono::month(month),
                                         std::chrono::day(day)};
  if (!date.ok())
    return invalid_argument(fmt::format("timestamp {} has no such date", quote_for_message(text)));
  return Timestamp(std::chrono::sys_days(date).time_since_epoch() + std::chrono::hours(hour) +
                   std::chrono::minutes(minute) + std::chrono::seconds(second) +
                   std::chrono::microseconds(micros));
}

Result<VerdictRow> row_from_json(const nlohmann::json& object) {
  if (!object.is_object()) return invalid_argument("a verdict row must be a JSON object");
  VerdictRow row;
  for (const ColumnSpec& column : verdict_columns()) {
    const std::string name(column.name);
    const auto found = object.find(name);
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
