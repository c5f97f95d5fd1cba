#include "core/json_fields.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace canrun {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

const json kObject = json::parse(R"({"name": "llama", "tags": ["a", "b"], "heads": 32,
  "score": 1.5, "nothing": null, "negative": -1, "mixed": ["a", 1], "number_text": "7"})");

TEST(JsonFieldsTest, OptionalFieldsReadTheirTypeAndLeaveAbsentOnesAlone) {
  std::string name = "unset";
  ASSERT_TRUE(read_json_string(kObject, "config", "name", name).ok());
  EXPECT_EQ(name, "llama");
  std::optional<std::string> missing;
  ASSERT_TRUE(read_json_string(kObject, "config", "absent", missing).ok());
  ASSERT_TRUE(read_json_string(kObject, "config", "nothing", missing).ok());
  EXPECT_FALSE(missing.has_value());
  std::vector<std::string> tags = {"old"};
  ASSERT_TRUE(read_json_string_list(kObject, "config", "tags", tags).ok());
  EXPECT_EQ(tags, (std::vector<std::string>{"a", "b"}));
  std::int64_t heads = 0;
  ASSERT_TRUE(read_json_integer(kObject, "config", "heads", heads).ok());
  EXPECT_EQ(heads, 32);
  std::optional<std::int64_t> count;
  ASSERT_TRUE(read_json_count(kObject, "config", "heads", count).ok());
  EXPECT_EQ(count, 32);
  double score = 0;
  ASSERT_TRUE(read_json_number(kObject, "config", "score", score).ok());
  EXPECT_EQ(score, 1.5);
  ASSERT_TRUE(read_json_number(kObject, "config", "heads", score).ok());
  EXPECT_EQ(score, 32.0);
  bool flag = true;
  ASSERT_TRUE(read_json_bool(nlohmann::json{{"flag", false}}, "config", "flag", flag).ok());
  EXPECT_FALSE(flag);
  ASSERT_TRUE(read_json_bool(kObject, "config", "absent", flag).ok());
  EXPECT_FALSE(flag);
}

TEST(JsonFieldsTest, WrongTypesNameWhereTheFieldWhatItHeldAndWhatBelongs) {
  std::string text;
  const auto number = read_json_string(kObject, "config.json", "heads", text);
  ASSERT_FALSE(number.ok());
  EXPECT_EQ(number.error().code(), ErrorCode::kCorrupt);
  EXPECT_EQ(number.error().message(),
            "config.json: field \"heads\" holds number where a string belongs");
  std::vector<std::string> tags = {"kept"};
  EXPECT_THAT(read_json_string_list(kObject, "c", "mixed", tags).error().message(),
              HasSubstr("field \"mixed\" holds number where a list of strings belongs"));
  EXPECT_THAT(read_json_string_list(kObject, "c", "name", tags).error().message(),
              HasSubstr("field \"name\" holds string where a list of strings belongs"));
  EXPECT_EQ(tags, std::vector<std::string>{"kept"});
  std::int64_t integer = 0;
  EXPECT_THAT(read_json_integer(kObject, "c", "score", integer).error().message(),
              HasSubstr("field \"score\" holds number where an integer belongs"));
  std::optional<std::int64_t> count;
  EXPECT_THAT(read_json_count(kObject, "c", "negative", count).error().message(),
              HasSubstr("field \"negative\" holds number where a non-negative integer belongs"));
  EXPECT_FALSE(count.has_value());
  double number_out = 0;
  EXPECT_THAT(read_json_number(kObject, "c", "number_text", number_out).error().message(),
              HasSubstr("field \"number_text\" holds string where a number belongs"));
  bool flag = false;
  EXPECT_THAT(read_json_bool(kObject, "c", "name", flag).error().message(),
              HasSubstr("field \"name\" holds string where true or false belongs"));
}

TEST(JsonFieldsTest, RequiredStringsMustBeThere) {
  EXPECT_EQ(*required_json_string(kObject, "page 1", "name"), "llama");
  const auto missing = required_json_string(kObject, "page 1", "id");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code(), ErrorCode::kCorrupt);
  EXPECT_EQ(missing.error().message(), "page 1: no field \"id\"");
  EXPECT_THAT(required_json_string(kObject, "page 1", "nothing").error().message(),
              HasSubstr("field \"nothing\" holds null where a string belongs"));
}

}  // namespace
}  // namespace canrun
