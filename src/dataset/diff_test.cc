#include "dataset/diff.h"

#include <gtest/gtest.h>

#include "dataset/test_rows.h"

namespace canrun::dataset {
namespace {

using testing::minimal_row;

std::vector<std::string> models(const std::vector<VerdictChange>& changes) {
  std::vector<std::string> out;
  for (const auto& change : changes) out.push_back(change.model_id);
  return out;
}

TEST(DiffTest, SortsEveryKindOfChange) {
  const std::vector<VerdictRow> from = {
      minimal_row("org/regressed", VerdictResult::kPass),
      minimal_row("org/fixed", VerdictResult::kFailCompile),
      minimal_row("org/dropped", VerdictResult::kPass),
      minimal_row("org/now-excluded", VerdictResult::kFailOom),
      minimal_row("org/was-excluded", VerdictResult::kExcluded),
      minimal_row("org/same", VerdictResult::kPass),
      minimal_row("org/other", VerdictResult::kFailCompile),
      minimal_row("org/still-excluded", VerdictResult::kExcluded)};
  const std::vector<VerdictRow> to = {minimal_row("org/regressed", VerdictResult::kFailRuntime),
                                      minimal_row("org/fixed", VerdictResult::kPass),
                                      minimal_row("org/now-excluded", VerdictResult::kExcluded),
                                      minimal_row("org/was-excluded", VerdictResult::kPass),
                                      minimal_row("org/same", VerdictResult::kPass),
                                      minimal_row("org/other", VerdictResult::kFailOom),
                                      minimal_row("org/new", VerdictResult::kTimeout),
                                      minimal_row("org/still-excluded", VerdictResult::kExcluded)};
  const StackDiff diff = diff_stacks(from, to);
  EXPECT_EQ(models(diff.regressions), std::vector<std::string>{"org/regressed"});
  EXPECT_EQ(diff.regressions[0].from_result, "PASS");
  EXPECT_EQ(diff.regressions[0].to_result, "FAIL_RUNTIME");
  EXPECT_EQ(models(diff.fixes), std::vector<std::string>{"org/fixed"});
  EXPECT_EQ(models(diff.newly_tested), (std::vector<std::string>{"org/new", "org/was-excluded"}));
  EXPECT_EQ(models(diff.no_longer_tested),
            (std::vector<std::string>{"org/dropped", "org/now-excluded"}));
  EXPECT_FALSE(diff.no_longer_tested[0].to_result.has_value());
  EXPECT_EQ(models(diff.other_changes), std::vector<std::string>{"org/other"});
  EXPECT_EQ(diff.unchanged, 2u);
}

TEST(DiffTest, TasksAreSeparateKeys) {
  VerdictRow vision = minimal_row("org/m", VerdictResult::kFailLoad);
  vision.task = "image-text-to-text";
  const StackDiff diff = diff_stacks({minimal_row("org/m", VerdictResult::kPass), vision},
                                     {minimal_row("org/m", VerdictResult::kPass)});
  EXPECT_TRUE(diff.regressions.empty());
  ASSERT_EQ(diff.no_longer_tested.size(), 1u);
  EXPECT_EQ(diff.no_longer_tested[0].task, "image-text-to-text");
}

}  // namespace
}  // namespace canrun::dataset
