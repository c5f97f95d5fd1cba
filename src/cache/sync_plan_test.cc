#include "cache/sync_plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace canrun::cache {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr std::int64_t kNow = 1'800'000'000'000;  // ms since the epoch

std::vector<std::string> paths(const SyncPlan& plan, SyncAction action) {
  std::vector<std::string> out;
  for (const auto& step : plan.steps) {
    if (step.action == action) out.push_back(step.path);
  }
  return out;
}

TEST(SyncPlanTest, CopiesWhatIsMissingOfAnotherSizeOrNewerByMoreThanASecond) {
  const std::vector<CacheFile> source = {
      {"a/dest-newer", 10, kNow}, {"a/new", 5, kNow},     {"a/resized", 6, kNow},
      {"a/same", 7, kNow},        {"a/touched", 8, kNow}, {"a/within-window", 9, kNow},
  };
  const std::vector<CacheFile> destination = {
      {"a/dest-newer", 10, kNow + 60'000},
      {"a/resized", 60, kNow},
      {"a/same", 7, kNow},
      {"a/touched", 8, kNow - 2'000},
      {"a/within-window", 9, kNow - 900},
  };
  const auto steps = compare_files(source, destination, /*delete_extra=*/false);
  const SyncPlan plan = plan_sync(steps);
  EXPECT_THAT(paths(plan, SyncAction::kCopy), ElementsAre("a/new", "a/resized", "a/touched"));
  EXPECT_THAT(paths(plan, SyncAction::kSkip),
              ElementsAre("a/dest-newer", "a/same", "a/within-window"));
  EXPECT_EQ(plan.bytes(SyncAction::kCopy), 5 + 6 + 8);
  EXPECT_EQ(plan.steps[0].reason, "new file");
  EXPECT_EQ(plan.steps[1].reason, "size differs");
  EXPECT_EQ(plan.steps[2].reason, "source newer");
}

TEST(SyncPlanTest, DeletesOnlyWithDeleteExtra) {
  const std::vector<CacheFile> source = {{"kept", 1, kNow}};
  const std::vector<CacheFile> destination = {{"extra", 3, kNow}, {"kept", 1, kNow}};
  EXPECT_THAT(paths(plan_sync(compare_files(source, destination, false)), SyncAction::kDelete),
              IsEmpty());
  const SyncPlan plan = plan_sync(compare_files(source, destination, true));
  EXPECT_THAT(paths(plan, SyncAction::kDelete), ElementsAre("extra"));
  EXPECT_EQ(plan.bytes(SyncAction::kDelete), 3);
}

TEST(SyncPlanTest, SkipsEntriesWithoutModelDoneAndNamesThem) {
  const std::vector<CacheFile> source = {
      {"v/MODULE_ok/model.done", 0, kNow},
      {"v/MODULE_ok/model.neff", 100, kNow},
      {"v/MODULE_bad/model.log", 20, kNow},
      {"v/MODULE_bad/model.hlo_module.pb", 30, kNow},
      {"v/MODULE_wip/model.hlo_module.pb", 40, kNow},
  };
  const SyncPlan plan = plan_sync(compare_files(source, {}, false));
  // model.done comes after the entry's other files, so the copy never looks complete early.
  EXPECT_THAT(paths(plan, SyncAction::kCopy),
              ElementsAre("v/MODULE_ok/model.neff", "v/MODULE_ok/model.done"));
  ASSERT_EQ(plan.skipped_entries.size(), 2u);
  EXPECT_EQ(plan.skipped_entries[0].entry, "v/MODULE_bad");
  EXPECT_EQ(plan.skipped_entries[0].state, EntryState::kFailed);
  EXPECT_EQ(plan.skipped_entries[1].entry, "v/MODULE_wip");
  EXPECT_EQ(plan.skipped_entries[1].state, EntryState::kIncomplete);
}

TEST(SyncPlanTest, DeleteNeverRemovesAnEntryTheSourceHoldsIncomplete) {
  const std::vector<CacheFile> source = {
      {"v/MODULE_a/model.log", 1, kNow},  // the source's compile of A failed
      {"v/MODULE_b/model.done", 0, kNow},
      {"v/MODULE_b/model.neff", 5, kNow},
  };
  const std::vector<CacheFile> destination = {
      {"v/MODULE_a/model.done", 0, kNow},  // the destination's A is good: kept
      {"v/MODULE_a/model.neff", 9, kNow},
      {"v/MODULE_b/model.done", 0, kNow},
      {"v/MODULE_b/model.neff", 5, kNow},
      {"v/MODULE_b/stale.bin", 2, kNow},      // not in the source's complete B: deleted
      {"v/MODULE_gone/model.done", 0, kNow},  // an entry the source lacks: deleted, marker first
      {"v/MODULE_gone/model.neff", 4, kNow},
  };
  const SyncPlan plan = plan_sync(compare_files(source, destination, true));
  EXPECT_THAT(
      paths(plan, SyncAction::kDelete),
      ElementsAre("v/MODULE_gone/model.done", "v/MODULE_b/stale.bin", "v/MODULE_gone/model.neff"));
  EXPECT_THAT(paths(plan, SyncAction::kCopy), IsEmpty());
  ASSERT_EQ(plan.skipped_entries.size(), 1u);
  EXPECT_EQ(plan.skipped_entries[0].entry, "v/MODULE_a");
}

TEST(SyncPlanTest, TreesWithoutModulesAreSyncedFileByFile) {
  // TorchInductor's cache: no model.done anywhere, every file is an entry of its own.
  const std::vector<CacheFile> source = {{"inductor-2.13/fxgraph/aa/x", 3, kNow},
                                         {"inductor-2.13/triton/0/k.so", 4, kNow}};
  const SyncPlan plan = plan_sync(compare_files(source, {}, false));
  EXPECT_THAT(paths(plan, SyncAction::kCopy),
              ElementsAre("inductor-2.13/fxgraph/aa/x", "inductor-2.13/triton/0/k.so"));
  EXPECT_THAT(plan.skipped_entries, IsEmpty());
}

TEST(SyncPlanTest, TorchNeuronNeffsAreCopiedAndItsWritesInProgressNeither) {
  const std::vector<CacheFile> source = {
      {"07/c1/.tmp.Hq27aZ", 40, kNow},  // a compile writing its NEFF at the source
      {"07/c1/07c1aa9e3b.neff", 100, kNow},
      {"3f/a2/3fa2c0de77.neff", 300, kNow},
  };
  const std::vector<CacheFile> destination = {
      {"3f/a2/.tmp.Zp01Lk", 10, kNow},      // one writing at the destination: left alone
      {"3f/a2/tmpk2j4x1a7.tmp", 10, kNow},  // the same, by torch-neuronx's Python helper
      {"9b/01/9b01dd.neff", 50, kNow},      // a NEFF the source lacks: deleted
  };
  const SyncPlan plan = plan_sync(compare_files(source, destination, /*delete_extra=*/true));
  EXPECT_THAT(paths(plan, SyncAction::kCopy),
              ElementsAre("07/c1/07c1aa9e3b.neff", "3f/a2/3fa2c0de77.neff"));
  EXPECT_THAT(paths(plan, SyncAction::kDelete), ElementsAre("9b/01/9b01dd.neff"));
  ASSERT_EQ(plan.skipped_entries.size(), 1u);
  EXPECT_EQ(plan.skipped_entries[0].entry, "07/c1/.tmp.Hq27aZ");
  EXPECT_EQ(plan.skipped_entries[0].state, EntryState::kIncomplete);
}

TEST(SyncPlanTest, StepsFromAnHfPlanFollowTheSameRules) {
  // As `hf buckets sync --plan` lists them: every source file a transfer or a skip.
  const SyncPlan plan = plan_sync({
      {SyncAction::kSkip, "v/MODULE_a/model.done", 0, "same mtime"},
      {SyncAction::kCopy, "v/MODULE_a/model.neff", 8, "size differs"},
      {SyncAction::kCopy, "v/MODULE_b/model.log", 1, "new file"},
      {SyncAction::kDelete, "v/MODULE_b/model.neff", 8, "not in source (--delete)"},
  });
  EXPECT_THAT(paths(plan, SyncAction::kCopy), ElementsAre("v/MODULE_a/model.neff"));
  EXPECT_THAT(paths(plan, SyncAction::kDelete), IsEmpty());
  ASSERT_EQ(plan.skipped_entries.size(), 1u);
  EXPECT_EQ(plan.skipped_entries[0].state, EntryState::kFailed);
}

}  // namespace
}  // namespace canrun::cache
