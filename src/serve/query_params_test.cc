#include "serve/query_params.h"

#include <gtest/gtest.h>

namespace canrun::serve {
namespace {

TEST(QueryParams, UnknownParametersAreNamedInTheErrorAndItsSubjects) {
  EXPECT_TRUE(check_parameters({{"task", "x"}}, {"task", "backend"}, "/api/model/").ok());
  EXPECT_TRUE(check_parameters({}, {}, "/api/versions").ok());
  const Status one = check_parameters({{"task", "x"}, {"colour", "red"}}, {"task"}, "/api/model/");
  ASSERT_FALSE(one.ok());
  EXPECT_EQ(one.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(one.error().has_reason(reason::kBadParameter));
  EXPECT_EQ(one.error().message(), "unknown parameter colour");
  EXPECT_EQ(one.error().subjects(), std::vector<std::string>{"colour"});
  const Status two = check_parameters({{"b", "1"}, {"a", "2"}}, {"task"}, "/api/model/");
  EXPECT_EQ(two.error().message(), "unknown parameters a, b");
  EXPECT_EQ(two.error().subjects(), (std::vector<std::string>{"a", "b"}));
  const Status none = check_parameters({{"x", "1"}}, {}, "/api/versions");
  EXPECT_EQ(none.error().message(), "/api/versions takes no parameters");
  EXPECT_EQ(none.error().subjects(), std::vector<std::string>{"x"});
}

TEST(QueryParams, CountsAreWholeNumbersUpToTheirMaximum) {
  EXPECT_EQ(*parse_count("limit", "0", 500), 0u);
  EXPECT_EQ(*parse_count("limit", "500", 500), 500u);
  for (const char* text : {"", "501", "-1", "1.5", "ten", "5 "}) {
    const auto count = parse_count("limit", text, 500);
    ASSERT_FALSE(count.ok()) << text;
    EXPECT_EQ(count.error().subjects(), std::vector<std::string>{"limit"}) << text;
  }
}

TEST(QueryParams, TheModelIdFollowsTheRoutesPrefix) {
  EXPECT_EQ(model_id_after("/api/model/Qwen/Qwen3-0.6B", "/api/model/")->str(), "Qwen/Qwen3-0.6B");
  for (const char* path : {"/api/model/", "/api/model/bad..id/x", "/api/model/no-owner"}) {
    const auto id = model_id_after(path, "/api/model/");
    ASSERT_FALSE(id.ok()) << path;
    EXPECT_EQ(id.error().subjects(), std::vector<std::string>{"model"}) << path;
  }
  EXPECT_EQ(param_of({{"task", "fill-mask"}}, "task"), "fill-mask");
  EXPECT_EQ(param_of({}, "task"), "");
  EXPECT_EQ(known_list({}), "none");
  EXPECT_EQ(known_list({"a", "b"}), "a, b");
}

}  // namespace
}  // namespace canrun::serve
