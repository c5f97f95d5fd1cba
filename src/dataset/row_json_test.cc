#include "dataset/row_json.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "dataset/test_rows.h"

namespace canrun::dataset {
namespace {

using ::testing::HasSubstr;

TEST(RowJsonTest, RoundTripsAFullAndAMinimalRow) {
  for (const VerdictRow& row :
       {testing::full_row(), testing::minimal_row("org/a", VerdictResult::kExcluded)}) {
    const nlohmann::json json = row_to_json(row);
    auto back = row_from_json(json);
    ASSERT_TRUE(back.ok()) << back.error().message();
    // `stack` comes back re-serialised from the parsed object; compare it as JSON.
    EXPECT_EQ(nlohmann::json::parse(back->stack), nlohmann::json::parse(row.stack));
    VerdictRow expected = row;
    expected.stack = back->stack;
    EXPECT_EQ(*back, expected);
  }
}

TEST(RowJsonTest, TimestampsAreIsoUtc) {
  EXPECT_EQ(format_timestamp(testing::full_row().started_at), "2025-12-02T15:20:00.123456Z");
  EXPECT_EQ(*parse_timestamp("2025-12-02T15:20:00.123456Z"), testing::full_row().started_at);
  EXPECT_EQ(*parse_timestamp("1970-01-01T00:00:01.5Z"),
            Timestamp(std::chrono::microseconds(1'500'000)));
  for (const char* bad : {"2025-12-02 15:20:00", "2025-13-02T15:20:00Z", "2025-02-30T00:00:00Z",
                          "2025-12-02T15:20:00+01:00", "2025-12-02T15:20:00.1234567Z", ""}) {
    EXPECT_FALSE(parse_timestamp(bad).ok()) << bad;
  }
}

TEST(RowJsonTest, ErrorsNameTheColumn) {
  nlohmann::json json = row_to_json(testing::full_row());
  json.erase("task");
  EXPECT_THAT(row_from_json(json).error().message(), HasSubstr("column task is missing"));
  json = row_to_json(testing::full_row());
  json["cores"] = "four";
  EXPECT_THAT(row_from_json(json).error().message(),
              HasSubstr("column cores is string, expected an integer"));
  json["cores"] = 1LL << 40;
  EXPECT_THAT(row_from_json(json).error().message(),
              HasSubstr("column cores is number, expected an integer in range"));
  json = row_to_json(testing::full_row());
  json["result"] = "MAYBE";
  EXPECT_THAT(row_from_json(json).error().message(),
              HasSubstr("column result is \"MAYBE\", not one of PASS, FAIL_LOAD"));
  json["result"] = 3;
  EXPECT_THAT(row_from_json(json).error().message(),
              HasSubstr("column result is number, expected a string"));
  json = row_to_json(testing::full_row());
  json["model_id"] = nullptr;
  EXPECT_THAT(row_from_json(json).error().message(),
              HasSubstr("column model_id is null, expected a string"));
}

}  // namespace
}  // namespace canrun::dataset
