// UTC times as canrun writes them in text: snapshot files, verdict rows, the Space's API.
//
//   "2026-12-02T15:24:00Z"          whole seconds (rankings snapshots' fetched_at)
//   "2026-12-02T15:24:00.123456Z"   microseconds (verdict rows' started_at)
//
// One codec for both: format_utc writes either form, parse_utc reads either (one to six
// fraction digits). Only years 1970 to 2200 are read, so that every parsed time also fits
// system_clock's 64-bit nanoseconds (which end in 2262).
//
// Thread safety: pure functions.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "core/result.h"

namespace canrun {

//! A UTC time to the microsecond, the finest that the text form and the dataset hold.
using UtcTime = std::chrono::sys_time<std::chrono::microseconds>;

//! Whether format_utc writes the fraction of the second.
enum class UtcFraction {
  kNone,          //!< "2026-12-02T15:24:00Z": the time rounded down to the second
  kMicroseconds,  //!< "2026-12-02T15:24:00.123456Z": always six digits
};

std::string format_utc(UtcTime time, UtcFraction fraction = UtcFraction::kNone);
//! The same for a clock reading: rounded down to the microsecond first.
std::string format_utc(std::chrono::system_clock::time_point time,
                       UtcFraction fraction = UtcFraction::kNone);

//! "YYYY-MM-DDTHH:MM:SS[.f{1,6}]Z" exactly (no spaces, offsets or lower-case letters).
//! Errors (kInvalidArgument) quote the text: "timestamp "..." is not ISO 8601 UTC like
//! 2026-12-02T15:24:00Z" for any other layout, "... has no such date" (Feb 30), "... is
//! outside the years 1970 to 2200". A leap second (:60) reads as the next minute's :00.
[[nodiscard]] Result<UtcTime> parse_utc(std::string_view text);

}  // namespace canrun
