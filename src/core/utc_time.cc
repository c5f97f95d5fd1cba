#include "core/utc_time.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <optional>

#include "core/text.h"

namespace canrun {
namespace {

constexpr int kFirstYear = 1970;
constexpr int kLastYear = 2200;

//! The number written by text[pos, pos + count) if those are all ASCII digits.
std::optional<int> digits_at(std::string_view text, std::size_t pos, std::size_t count) {
  if (pos + count > text.size()) return std::nullopt;
  int value = 0;
  for (const char c : text.substr(pos, count)) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

}  // namespace

std::string format_utc(UtcTime time, UtcFraction fraction) {
  const auto seconds = std::chrono::floor<std::chrono::seconds>(time);
  if (fraction == UtcFraction::kNone) return fmt::format("{:%Y-%m-%dT%H:%M:%S}Z", seconds);
  return fmt::format("{:%Y-%m-%dT%H:%M:%S}.{:06d}Z", seconds, (time - seconds).count());
}

std::string format_utc(std::chrono::system_clock::time_point time, UtcFraction fraction) {
  return format_utc(std::chrono::floor<std::chrono::microseconds>(time), fraction);
}

Result<UtcTime> parse_utc(std::string_view text) {
  const auto not_iso = [&] {
    return invalid_argument(fmt::format(
        "timestamp {} is not ISO 8601 UTC like 2026-12-02T15:24:00Z", quote_for_message(text)));
  };
  // YYYY-MM-DDTHH:MM:SS, then an optional fraction, then Z.
  constexpr std::string_view kSeparators = "--T::";
  constexpr std::size_t kSeparatorAt[] = {4, 7, 10, 13, 16};
  for (std::size_t idx = 0; idx < kSeparators.size(); ++idx) {
    if (text.size() <= kSeparatorAt[idx] || text[kSeparatorAt[idx]] != kSeparators[idx]) {
      return not_iso();
    }
  }
  const auto year = digits_at(text, 0, 4);
  const auto month = digits_at(text, 5, 2);
  const auto day = digits_at(text, 8, 2);
  const auto hour = digits_at(text, 11, 2);
  const auto minute = digits_at(text, 14, 2);
  const auto second = digits_at(text, 17, 2);
  if (!year || !month || !day || !hour || !minute || !second || *hour > 23 || *minute > 59 ||
      *second > 60) {
    return not_iso();
  }
  std::string_view rest = text.substr(19);
  std::int64_t micros = 0;
  if (rest.starts_with('.')) {
    std::size_t digits = 1;
    while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') ++digits;
    --digits;  // the '.'
    if (digits < 1 || digits > 6) return not_iso();
    micros = *digits_at(rest, 1, digits);
    for (std::size_t pad = digits; pad < 6; ++pad) micros *= 10;
    rest.remove_prefix(1 + digits);
  }
  if (rest != "Z") return not_iso();
  const std::chrono::year_month_day date{std::chrono::year(*year),
                                         std::chrono::month(static_cast<unsigned>(*month)),
                                         std::chrono::day(static_cast<unsigned>(*day))};
  if (!date.ok()) {
    return invalid_argument(fmt::format("timestamp {} has no such date", quote_for_message(text)));
  }
  if (*year < kFirstYear || *year > kLastYear) {
    return invalid_argument(fmt::format("timestamp {} is outside the years {} to {}",
                                        quote_for_message(text), kFirstYear, kLastYear));
  }
  return UtcTime(std::chrono::sys_days(date).time_since_epoch() + std::chrono::hours(*hour) +
                 std::chrono::minutes(*minute) + std::chrono::seconds(*second) +
                 std::chrono::microseconds(micros));
}

}  // namespace canrun
