#include "core/utc_time.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace canrun {
namespace {

using std::chrono::microseconds;
using std::chrono::seconds;
using ::testing::HasSubstr;

constexpr std::int64_t kDecember2 = 1'796'225'040;  // 2026-12-02T15:24:00Z

TEST(UtcTimeTest, FormatsWithOrWithoutTheFraction) {
  const UtcTime time = UtcTime(seconds(kDecember2)) + microseconds(123'456);
  EXPECT_EQ(format_utc(time), "2026-12-02T15:24:00Z");
  EXPECT_EQ(format_utc(time, UtcFraction::kMicroseconds), "2026-12-02T15:24:00.123456Z");
  EXPECT_EQ(format_utc(UtcTime{}, UtcFraction::kMicroseconds), "1970-01-01T00:00:00.000000Z");
  // A clock reading is rounded down, never up into the next second.
  const std::chrono::system_clock::time_point reading =
      std::chrono::system_clock::time_point(seconds(kDecember2)) +
      std::chrono::nanoseconds(999'999'999);
  EXPECT_EQ(format_utc(reading), "2026-12-02T15:24:00Z");
  EXPECT_EQ(format_utc(reading, UtcFraction::kMicroseconds), "2026-12-02T15:24:00.999999Z");
}

TEST(UtcTimeTest, ParsesBothFormsAndRoundTrips) {
  EXPECT_EQ(*parse_utc("2026-12-02T15:24:00Z"), UtcTime(seconds(kDecember2)));
  EXPECT_EQ(*parse_utc("1970-01-01T00:00:01.5Z"), UtcTime(microseconds(1'500'000)));
  EXPECT_EQ(*parse_utc("1970-01-01T00:00:00.000001Z"), UtcTime(microseconds(1)));
  EXPECT_EQ(*parse_utc("2016-12-31T23:59:60Z"), *parse_utc("2017-01-01T00:00:00Z"));
  for (const UtcTime time : {UtcTime{}, UtcTime(seconds(kDecember2)) + microseconds(7)}) {
    EXPECT_EQ(*parse_utc(format_utc(time, UtcFraction::kMicroseconds)), time);
  }
}

TEST(UtcTimeTest, RefusesOtherLayoutsNamingTheText) {
  for (const char* bad :
       {"", "2026-12-02", "2026-12-02 15:24:00Z", "2026-12-02T15:24:00", "2026-12-02T15:24:00z",
        "2026-12-02T15:24:00+01:00", "2026-12-02T15:24:00.Z", "2026-12-02T15:24:00.1234567Z",
        "2026-12-02T15:24:00ZZ", " 2026-12-02T15:24:00Z", "2026-1-02T15:24:00Z",
        "+026-12-02T15:24:00Z", "2026-12-02T24:00:00Z", "2026-12-02T15:60:00Z",
        "2026-12-02T15:24:61Z", "2026-13-02T15:24:00Z"}) {
    const auto parsed = parse_utc(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.error().code(), ErrorCode::kInvalidArgument) << bad;
  }
  EXPECT_THAT(parse_utc("2026-12-02 15:24:00").error().message(),
              HasSubstr("timestamp \"2026-12-02 15:24:00\" is not ISO 8601 UTC like "
                        "2026-12-02T15:24:00Z"));
  EXPECT_THAT(parse_utc("2025-02-30T00:00:00Z").error().message(),
              HasSubstr("timestamp \"2025-02-30T00:00:00Z\" has no such date"));
}

TEST(UtcTimeTest, RefusesYearsASystemClockCannotHold) {
  // Found by model_facts_fuzz: a far year overflowed system_clock's nanoseconds (UBSan).
  EXPECT_THAT(parse_utc("6465-01-01T00:00:00Z").error().message(),
              HasSubstr("is outside the years 1970 to 2200"));
  EXPECT_FALSE(parse_utc("1969-12-31T23:59:59Z").ok());
  EXPECT_TRUE(parse_utc("2200-12-31T23:59:59.999999Z").ok());
}

}  // namespace
}  // namespace canrun
