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

std::vector<std::string> models(const std::vector<MeasureChange>& changes) {
  std::vector<std::string> out;
  for (const auto& change : changes) out.push_back(change.model_id);
  return out;
}

VerdictRow measured(std::string model, VerdictResult result, int cores, std::string parallelism,
                    double runtime_s, std::int64_t memory) {
  VerdictRow row = minimal_row(std::move(model), result);
  row.cores = cores;
  row.parallelism = std::move(parallelism);
  row.runtime_s = runtime_s;
  row.peak_device_memory_bytes = memory;
  return row;
}

TEST(DiffTest, ListsChangedPlansAndMeasurementsBeyondTheThreshold) {
  constexpr std::int64_t kGib = 1 << 30;
  const std::vector<VerdictRow> from = {
      measured("org/resharded", VerdictResult::kPass, 2, "tp", 100, 4 * kGib),
      measured("org/slower", VerdictResult::kPass, 1, "none", 100, 4 * kGib),
      measured("org/a-bit-slower", VerdictResult::kPass, 1, "none", 100, 4 * kGib),
      measured("org/tiny-but-double", VerdictResult::kPass, 1, "none", 0.5, 4 * kGib),
      measured("org/leaner", VerdictResult::kPass, 1, "none", 100, 4 * kGib),
      measured("org/regressed-slower", VerdictResult::kPass, 1, "none", 100, 4 * kGib),
      minimal_row("org/now-excluded", VerdictResult::kPass)};
  const std::vector<VerdictRow> to = {
      measured("org/resharded", VerdictResult::kPass, 4, "tp", 100, 4 * kGib),
      measured("org/slower", VerdictResult::kPass, 1, "none", 130, 4 * kGib),
      measured("org/a-bit-slower", VerdictResult::kPass, 1, "none", 110, 4 * kGib),
      measured("org/tiny-but-double", VerdictResult::kPass, 1, "none", 1.0, 4 * kGib),
      measured("org/leaner", VerdictResult::kPass, 1, "none", 100, 2 * kGib),
      measured("org/regressed-slower", VerdictResult::kTimeout, 1, "none", 1800, 4 * kGib),
      minimal_row("org/now-excluded", VerdictResult::kExcluded)};
  const StackDiff diff = diff_stacks(from, to);
  EXPECT_EQ(models(diff.changed_plans), std::vector<std::string>{"org/resharded"});
  EXPECT_EQ(diff.changed_plans[0].from_cores, 2);
  EXPECT_EQ(diff.changed_plans[0].to_cores, 4);
  // 20 % and 1 s at least, PASS on both sides only.
  EXPECT_EQ(models(diff.run_time_changes), std::vector<std::string>{"org/slower"});
  EXPECT_EQ(models(diff.memory_changes), std::vector<std::string>{"org/leaner"});
  EXPECT_EQ(models(diff.regressions), std::vector<std::string>{"org/regressed-slower"});
  const StackDiff strict = diff_stacks(from, to, {0.05, 0.1, ""});
  EXPECT_EQ(models(strict.run_time_changes),
            (std::vector<std::string>{"org/a-bit-slower", "org/slower", "org/tiny-but-double"}));
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
  EXPECT_EQ(diff.regressions[0].from_result, VerdictResult::kPass);
  EXPECT_EQ(diff.regressions[0].to_result, VerdictResult::kFailRuntime);
  EXPECT_EQ(models(diff.fixes), std::vector<std::string>{"org/fixed"});
  EXPECT_EQ(models(diff.newly_tested), (std::vector<std::string>{"org/new", "org/was-excluded"}));
  EXPECT_EQ(models(diff.no_longer_tested),
            (std::vector<std::string>{"org/dropped", "org/now-excluded"}));
  EXPECT_FALSE(diff.no_longer_tested[0].to_result.has_value());
  EXPECT_EQ(models(diff.other_changes), std::vector<std::string>{"org/other"});
  EXPECT_TRUE(diff.unverified.empty());
  EXPECT_EQ(diff.unchanged, 2u);
}

VerdictRow excluded_row(std::string model_id, std::string reason) {
  VerdictRow row = minimal_row(std::move(model_id), VerdictResult::kExcluded);
  row.exclusion_reason = std::move(reason);
  return row;
}

TEST(DiffTest, FollowsTheRegressionRuleForExclusionsAndReferenceFailures) {
  const std::vector<VerdictRow> from = {
      minimal_row("org/no-reference", VerdictResult::kPass),
      minimal_row("org/now-gated", VerdictResult::kPass),
      minimal_row("org/now-too-large", VerdictResult::kPass),
      minimal_row("org/no-plan-now", VerdictResult::kPass),
      excluded_row("org/fits-again", "too_large"),
      minimal_row("org/reference-back", VerdictResult::kReferenceFail),
      excluded_row("org/curated-in", "low_priority"),
      minimal_row("org/timed-out", VerdictResult::kPass)};
  const std::vector<VerdictRow> to = {
      minimal_row("org/no-reference", VerdictResult::kReferenceFail),
      excluded_row("org/now-gated", "gated"),
      excluded_row("org/now-too-large", "too_large"),
      excluded_row("org/no-plan-now", "no_parallel_plan"),
      minimal_row("org/fits-again", VerdictResult::kPass),
      minimal_row("org/reference-back", VerdictResult::kPass),
      minimal_row("org/curated-in", VerdictResult::kPass),
      minimal_row("org/timed-out", VerdictResult::kTimeout)};
  const StackDiff diff = diff_stacks(from, to);
  EXPECT_EQ(models(diff.regressions),
            (std::vector<std::string>{"org/no-plan-now", "org/now-too-large", "org/timed-out"}));
  EXPECT_EQ(diff.regressions[1].to_exclusion_reason, "too_large");
  EXPECT_EQ(models(diff.unverified),
            (std::vector<std::string>{"org/no-reference", "org/now-gated"}));
  EXPECT_EQ(diff.unverified[1].to_result, VerdictResult::kExcluded);
  EXPECT_EQ(diff.unverified[1].to_exclusion_reason, "gated");
  EXPECT_EQ(models(diff.fixes), std::vector<std::string>{"org/fits-again"});
  EXPECT_EQ(models(diff.newly_tested), std::vector<std::string>{"org/curated-in"});
  EXPECT_EQ(models(diff.other_changes), std::vector<std::string>{"org/reference-back"});
  EXPECT_TRUE(diff.no_longer_tested.empty());
  EXPECT_EQ(diff.unchanged, 0u);
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
