#include "core/result.h"

#include <gtest/gtest.h>

#include <string>

namespace canrun {
namespace {

Result<int> parse_positive(int value) {
  if (value <= 0) return invalid_argument("value must be positive");
  return value;
}

Result<int> doubled(int value) {
  CANRUN_ASSIGN_OR_RETURN(int checked, parse_positive(value));
  return checked * 2;
}

Status check_twice(int value) {
  CANRUN_RETURN_IF_ERROR(parse_positive(value));
  CANRUN_RETURN_IF_ERROR(parse_positive(value - 1));
  return ok_status();
}

TEST(ResultTest, HoldsValueOrError) {
  const auto good = parse_positive(3);
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, 3);
  const auto bad = parse_positive(-1);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(bad.error().message(), "value must be positive");
}

TEST(ResultTest, MacrosPropagateTheFirstError) {
  EXPECT_EQ(*doubled(4), 8);
  EXPECT_EQ(doubled(0).error().code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(check_twice(5).ok());
  EXPECT_FALSE(check_twice(1).ok());
}

TEST(ResultTest, ContextIsPrepended) {
  const Error error = corrupt("bad magic").with_context("data/a.parquet");
  EXPECT_EQ(error.code(), ErrorCode::kCorrupt);
  EXPECT_EQ(error.message(), "data/a.parquet: bad magic");
  EXPECT_EQ(error_code_name(error.code()), "corrupt");
}

TEST(ResultTest, ReasonSurvivesContext) {
  const Error error = not_found("the repo has no weights")
                          .with_reason(reason::kNoSafetensors, {"MODEL"})
                          .with_context("org/model")
                          .with_context("canrun test");
  EXPECT_TRUE(error.has_reason(reason::kNoSafetensors));
  EXPECT_EQ(error.subjects(), std::vector<std::string>{"MODEL"});
  EXPECT_EQ(error.message(), "canrun test: org/model: the repo has no weights");
  EXPECT_FALSE(not_found("org/model: no_safetensors: fake").has_reason(reason::kNoSafetensors));
}

TEST(ResultTest, MoveOnlyValues) {
  Result<std::unique_ptr<int>> holder = std::make_unique<int>(7);
  ASSERT_TRUE(holder.ok());
  std::unique_ptr<int> taken = std::move(holder).value();
  EXPECT_EQ(*taken, 7);
}

// Reading a Result in the wrong state is a bug in canrun: it aborts with a message in every build
// type (the suite builds RelWithDebInfo, with NDEBUG), never undefined behaviour.
TEST(ResultDeathTest, ValueOfAnErrorAbortsNamingTheError) {
  const Result<int> bad = parse_positive(-1);
  EXPECT_DEATH(
      (void)bad.value(),
      "value\\(\\) of a Result holding an error \\(invalid_argument: value must be positive\\)");
  EXPECT_DEATH((void)*parse_positive(0), "value must be positive");
  const Result<std::string> missing = not_found("no such file");
  EXPECT_DEATH((void)missing->size(), "holding an error \\(not_found: no such file\\)");
}

TEST(ResultDeathTest, ErrorOfAValueAborts) {
  const Result<int> good = parse_positive(3);
  EXPECT_DEATH((void)good.error(), "error\\(\\) of a Result holding a value");
  EXPECT_DEATH((void)check_twice(5).error(), "error\\(\\) of a Result holding a value");
}

}  // namespace
}  // namespace canrun
