#include "serve/url.h"

#include <gtest/gtest.h>

namespace canrun::serve {
namespace {

TEST(PercentDecode, DecodesEscapesAndPlus) {
  EXPECT_EQ(*percent_decode("Qwen%2FQwen3", false), "Qwen/Qwen3");
  EXPECT_EQ(*percent_decode("a+b", true), "a b");
  EXPECT_EQ(*percent_decode("a+b", false), "a+b");
  EXPECT_EQ(*percent_decode("%C3%A9", false), "\xc3\xa9");
}

TEST(PercentDecode, RejectsBadEscapesInvalidUtf8AndControlBytes) {
  for (const char* bad : {"%", "%4", "%zz", "abc%g1", "%C3", "%FF", "%00", "%0a"}) {
    const auto decoded = percent_decode(bad, false);
    ASSERT_FALSE(decoded.ok()) << bad;
    EXPECT_EQ(decoded.error().code(), ErrorCode::kInvalidArgument) << bad;
  }
  EXPECT_NE(percent_decode("%zz", false).error().message().find("%zz"), std::string::npos);
}

TEST(ParseTarget, SplitsPathAndQuery) {
  const auto target = parse_target("/api/models?view=trending&q=qwen+3&task=text-generation");
  ASSERT_TRUE(target.ok()) << target.error().message();
  EXPECT_EQ(target->path, "/api/models");
  EXPECT_EQ(target->query.at("view"), "trending");
  EXPECT_EQ(target->query.at("q"), "qwen 3");
  EXPECT_EQ(target->query.size(), 3u);
}

TEST(ParseTarget, RejectsDotSegmentsEvenWhenEncoded) {
  for (const char* bad :
       {"/../etc/passwd", "/a/..", "/%2e%2e/x", "/./app.js", "/a\\..\\b", "/%2E%2E%2Fsecret"}) {
    const auto target = parse_target(bad);
    EXPECT_FALSE(target.ok()) << bad;
  }
  EXPECT_TRUE(parse_target("/app.js").ok());
  EXPECT_TRUE(parse_target("/model/a/b..c").ok());
}

TEST(ParseTarget, RejectsRepeatedParametersAndMissingSlash) {
  EXPECT_FALSE(parse_target("/api/models?q=a&q=b").ok());
  EXPECT_FALSE(parse_target("api/models").ok());
  EXPECT_FALSE(parse_target("*").ok());
}

TEST(PercentEncode, RoundTrips) {
  const std::string text = "a b/c?d&e=é";
  EXPECT_EQ(*percent_decode(percent_encode(text), false), text);
}

}  // namespace
}  // namespace canrun::serve
