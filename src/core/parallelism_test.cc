#include "core/parallelism.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace canrun {
namespace {

using ::testing::HasSubstr;

TEST(ParallelismTest, EachShortNameParsesBackToItself) {
  for (const Parallelism each : {Parallelism::kNone, Parallelism::kTensor, Parallelism::kExpert}) {
    EXPECT_EQ(parse_parallelism(to_string(each)), each);
  }
  EXPECT_EQ(to_string(Parallelism::kTensor), "tp");
}

TEST(ParallelismTest, AnythingElseIsRefusedByName) {
  EXPECT_EQ(parse_parallelism("TP"), std::nullopt);
  EXPECT_EQ(parse_parallelism(""), std::nullopt);
  auto refused = parse_parallelism("pp", "--parallelism");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(refused.error().message(), HasSubstr("--parallelism \"pp\" is not none, tp or ep"));
}

}  // namespace
}  // namespace canrun
