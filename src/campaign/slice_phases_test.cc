#include "campaign/slice_phases.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "backend/profile.h"
#include "campaign/campaign_dir.h"
#include "campaign/job_sizing.h"
#include "core/test_temp_dir.h"
#include "dataset/dataset.h"
#include "dataset/stack_key.h"
#include "process/process.h"

namespace canrun::campaign {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr const char* kCommit = "0123456789abcdef0123456789abcdef01234567";
constexpr const char* kOtherCommit = "fedcba9876543210fedcba9876543210fedcba98";

backend::BackendProfile repository_profile(const std::string& name) {
  auto profile =
      backend::load_profile(std::string(CANRUN_SOURCE_DIR) + "/backends/" + name + ".toml");
  EXPECT_TRUE(profile.ok()) << name << ": " << profile.error().message();
  return std::move(profile).value();
}

//! A stack as probe_stack reports one, without asking a Python.
stack::Stack test_stack(std::string library_version = "4.50.0") {
  stack::Stack stack;
  stack.python = "python3";
  stack.versions = {{"python", "3.11.7"}, {"torch", "2.5.1"}, {"transformers", library_version}};
  stack.compiler_version = "2.5.1";
  stack.library_version = std::move(library_version);
  return stack;
}

WorkItem planned(std::string model, std::uint64_t weights_bytes = 1 << 20) {
  WorkItem item(*ModelId::parse(model), "text-generation");
  item.revision = kCommit;
  item.source = "listed";
  item.weights_bytes = weights_bytes;
  return item;
}

WorkItem excluded(std::string model, std::string reason, std::string why) {
  WorkItem item = planned(std::move(model));
  item.revision.clear();
  item.exclusion_reason = std::move(reason);
  item.why = std::move(why);
  return item;
}

dataset::VerdictRow row_of(const WorkItem& item, VerdictResult result, double runtime_s = 10) {
  dataset::VerdictRow row;
  row.model_id = item.model_id.str();
  row.task = item.task;
  if (!item.revision.empty()) row.revision = item.revision;
  row.backend = "cpu";
  row.result = result;
  if (result == VerdictResult::kExcluded) {
    row.exclusion_reason = item.exclusion_reason;
    row.error = item.why;
  } else {
    row.runtime_s = runtime_s;
  }
  return row;
}

// --- what runs now, and what stands ------------------------------------------------------------

TEST(NeedsRetryTest, FailedRunsWhatDidNotPassAllRunsEverythingNeitherAnExclusion) {
  const WorkItem item = planned("org/model");
  for (const auto& [result, retry, expected] : {
           std::tuple{VerdictResult::kPass, "", false},
           std::tuple{VerdictResult::kFailCompile, "", false},
           std::tuple{VerdictResult::kPass, "failed", false},
           std::tuple{VerdictResult::kFailCompile, "failed", true},
           std::tuple{VerdictResult::kTimeout, "failed", true},
           std::tuple{VerdictResult::kPass, "all", true},
           std::tuple{VerdictResult::kCrash, "all", true},
           std::tuple{VerdictResult::kExcluded, "failed", false},
           std::tuple{VerdictResult::kExcluded, "all", false},
       }) {
    EXPECT_EQ(needs_retry(row_of(item, result), retry), expected)
        << to_string(result) << " with --retry " << retry;
  }
}

//! Five items: passed, failed, excluded (not yet recorded), new, excluded (recorded).
SliceWork five_items() {
  SliceWork work;
  work.items = {planned("org/passed"), planned("org/failed"),
                excluded("org/gated", "gated", "the repository is gated"), planned("org/new"),
                excluded("org/big", "too_large", "needs 80 GiB")};
  work.indices = {0, 1, 2, 3, 4};
  work.recorded = {{0, row_of(work.items[0], VerdictResult::kPass, 20)},
                   {1, row_of(work.items[1], VerdictResult::kFailLoad, 5)},
                   {4, row_of(work.items[4], VerdictResult::kExcluded)}};
  return work;
}

std::vector<std::size_t> keys(const std::map<std::size_t, dataset::VerdictRow>& rows) {
  std::vector<std::size_t> out;
  for (const auto& [index, row] : rows) out.push_back(index);
  return out;
}

TEST(DecideWhatRunsTest, RecordedVerdictsStandAndTheRestRunsOrIsExcluded) {
  const SliceDecision decision = decide_what_runs(five_items(), "");
  EXPECT_THAT(keys(decision.standing), ElementsAre(0, 1, 4));
  EXPECT_THAT(decision.to_run, ElementsAre(3));
  EXPECT_THAT(decision.to_exclude, ElementsAre(2));
  // The recorded runtimes are what the scheduler expects of those models next time.
  EXPECT_EQ(decision.history.runtime_s("org/passed", "cpu"), 20);
  EXPECT_EQ(decision.history.runtime_s("org/failed", "cpu"), 5);
  EXPECT_EQ(decision.history.runtime_s("org/new", "cpu"), std::nullopt);
}

TEST(DecideWhatRunsTest, RetryRunsRecordedVerdictsAgainButNeverAnExclusion) {
  const SliceDecision failed = decide_what_runs(five_items(), "failed");
  EXPECT_THAT(keys(failed.standing), ElementsAre(0, 4));
  EXPECT_THAT(failed.to_run, ElementsAre(1, 3));
  EXPECT_THAT(failed.to_exclude, ElementsAre(2));

  const SliceDecision all = decide_what_runs(five_items(), "all");
  EXPECT_THAT(keys(all.standing), ElementsAre(4));
  EXPECT_THAT(all.to_run, ElementsAre(0, 1, 3));
}

TEST(DecideWhatRunsTest, AWorkerDecidesForItsSliceOnly) {
  SliceWork work = five_items();
  work.indices = {3, 1};  // its slice, in the slice's order
  const SliceDecision decision = decide_what_runs(work, "failed");
  EXPECT_THAT(decision.to_run, ElementsAre(3, 1));
  EXPECT_TRUE(decision.standing.empty());
  EXPECT_TRUE(decision.to_exclude.empty());
}

TEST(StandingRowsTest, TheSameRunOrTheSameExclusionInTheSameWordsStands) {
  const std::vector<WorkItem> items = {
      planned("org/same"),
      planned("org/moved"),
      excluded("org/gated", "gated", "the repository is gated"),
      excluded("org/reworded", "gated", "the repository is gated"),
      planned("org/now-excluded"),
      planned("org/other-task"),
  };
  WorkItem moved = items[1];
  moved.revision = kOtherCommit;  // the dataset's row is of an older commit
  WorkItem reworded = items[3];
  reworded.why = "gated: ask for access";
  WorkItem other_task = items[5];
  other_task.task = "fill-mask";
  const std::vector<dataset::VerdictRow> rows = {
      row_of(items[0], VerdictResult::kFailRuntime),
      row_of(moved, VerdictResult::kPass),
      row_of(items[2], VerdictResult::kExcluded),
      row_of(reworded, VerdictResult::kExcluded),
      row_of(excluded("org/now-excluded", "too_large", "needs 80 GiB"), VerdictResult::kExcluded),
      row_of(other_task, VerdictResult::kPass),
      row_of(planned("org/not-planned"), VerdictResult::kPass),
  };
  const auto standing = standing_rows(items, rows);
  EXPECT_THAT(keys(standing), ElementsAre(0, 2));
  EXPECT_EQ(standing.at(0).result, VerdictResult::kFailRuntime);  // a failure stands too
}

// --- the work a slice is given -------------------------------------------------------------------

class SliceWorkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    items_ = {planned("org/a"), planned("org/b"), planned("org/c")};
    nlohmann::json settings = {{"backend", "cpu"},
                               {"compiler_version", stack_.compiler_version},
                               {"library_version", stack_.library_version}};
    ASSERT_TRUE(dir_.write_plan(settings, items_).ok());
  }

  canrun::testing::TempDir temp_{"slice-work"};
  CampaignDir dir_{temp_.path() / "campaign"};
  backend::BackendProfile profile_ = repository_profile("cpu");
  stack::Stack stack_ = test_stack();
  std::vector<WorkItem> items_;
};

TEST_F(SliceWorkTest, AWorkerIsGivenItsSliceAndWhatItRecordedBefore) {
  ASSERT_TRUE(dir_.write_slices({{0, 2}, {1}}).ok());
  ASSERT_TRUE(dir_.write_result(0, 2, row_of(items_[2], VerdictResult::kPass)).ok());
  auto work = worker_work(dir_, 0, profile_, stack_);
  ASSERT_TRUE(work.ok()) << work.error().message();
  EXPECT_EQ(work->items, items_);
  EXPECT_THAT(work->indices, ElementsAre(0, 2));
  EXPECT_THAT(keys(work->recorded), ElementsAre(2));  // a requeued worker continues
  auto other = worker_work(dir_, 1, profile_, stack_);
  ASSERT_TRUE(other.ok());
  EXPECT_THAT(other->indices, ElementsAre(1));
  EXPECT_TRUE(other->recorded.empty());
}

TEST_F(SliceWorkTest, AWorkerRefusesASliceTheCampaignDoesNotHave) {
  ASSERT_TRUE(dir_.write_slices({{0, 2}, {1}}).ok());
  auto beyond = worker_work(dir_, 7, profile_, stack_);
  ASSERT_FALSE(beyond.ok());
  EXPECT_EQ(beyond.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(beyond.error().message(),
            "--index 7: campaign " + dir_.root().string() + " has slices 0 to 1");
  // Without slices.json the campaign is one slice of every item.
  fs::remove(dir_.root() / "slices.json");
  auto whole = worker_work(dir_, 0, profile_, stack_);
  ASSERT_TRUE(whole.ok());
  EXPECT_THAT(whole->indices, ElementsAre(0, 1, 2));
}

TEST_F(SliceWorkTest, AWorkerRefusesANodeWithAnotherStack) {
  auto refused = worker_work(dir_, 0, profile_, test_stack("4.51.0"));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code(), ErrorCode::kFailedCheck);
  EXPECT_EQ(refused.error().message(),
            "campaign " + dir_.root().string() + " was planned for " + profile_.compiler +
                " 2.5.1 and transformers 4.50.0; this node's stack has 2.5.1 and transformers "
                "4.51.0: its verdicts would belong to another stack");
}

TEST_F(SliceWorkTest, AResumedCampaignIsGivenEveryItemAndItsResults) {
  ASSERT_TRUE(dir_.write_result(0, 1, row_of(items_[1], VerdictResult::kFailLoad)).ok());
  {
    std::ofstream broken(dir_.slice_dir(0) / "results" / "0.json");
    broken << "{\"model_id\": ";  // cut short
  }
  auto work = resumed_work(dir_, 0, "cpu");
  ASSERT_TRUE(work.ok()) << work.error().message();
  EXPECT_EQ(work->items, items_);
  EXPECT_THAT(work->indices, ElementsAre(0, 1, 2));
  EXPECT_THAT(keys(work->recorded), ElementsAre(1));  // the broken result runs again
  ASSERT_EQ(work->problems.size(), 1u);
  EXPECT_THAT(work->problems[0], HasSubstr("0.json"));
}

TEST_F(SliceWorkTest, AResumedCampaignMustBeOnItsBackend) {
  auto refused = resumed_work(dir_, 0, "neuron");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(refused.error().message(),
            "campaign folder " + dir_.root().string() +
                " holds a campaign on backend cpu, not neuron; give its backend or another "
                "--campaign-dir");
}

// --- excluded rows and where verdicts go -----------------------------------------------------

class VerdictRecorderTest : public ::testing::Test {
 protected:
  //! The row of an excluded item as the campaign records it (nothing runs).
  dataset::VerdictRow excluded_verdict(const WorkItem& item) {
    return excluded_row(item, profile_, stack_);
  }
  //! A run's failure on the same stack.
  dataset::VerdictRow failed_verdict(const std::string& model) {
    dataset::VerdictRow row = excluded_verdict(excluded(model, "gated", "-"));
    row.revision = kCommit;
    row.result = VerdictResult::kFailLoad;
    row.exclusion_reason.reset();
    row.error = "ValueError: unknown architecture";
    row.cores = 1;
    row.runtime_s = 3.5;
    return row;
  }
  std::vector<dataset::VerdictRow> dataset_rows() const {
    auto key = dataset::StackKey::make(profile_.name, profile_.compiler, stack_.compiler_version,
                                       "transformers", stack_.library_version);
    EXPECT_TRUE(key.ok());
    auto rows = dataset_.read_stack(*key);
    return rows.ok() ? *rows : std::vector<dataset::VerdictRow>{};
  }
  std::vector<std::string> dataset_logs() const {
    std::vector<std::string> logs;
    std::error_code error;
    for (fs::recursive_directory_iterator it(dataset_.root() / "logs", error), end;
         !error && it != end; it.increment(error)) {
      if (it->path().extension() != ".log") continue;
      std::ifstream file(it->path());
      logs.push_back((std::stringstream() << file.rdbuf()).str());
    }
    return logs;
  }

  canrun::testing::TempDir temp_{"verdict-recorder"};
  CampaignDir dir_{temp_.path() / "campaign"};
  dataset::DatasetDir dataset_{temp_.path() / "dataset"};
  backend::BackendProfile profile_ = repository_profile("cpu");
  stack::Stack stack_ = test_stack();
};

TEST_F(VerdictRecorderTest, AnExcludedRowSaysTheReasonAndWhyInTheStacksColumns) {
  WorkItem item = excluded("org/big", "too_large", "needs 80 GiB, the machine has 24");
  item.weights_bytes = 3 << 20;
  const dataset::VerdictRow row = excluded_verdict(item);
  EXPECT_EQ(row.model_id, "org/big");
  EXPECT_EQ(row.task, "text-generation");
  EXPECT_EQ(row.result, VerdictResult::kExcluded);
  EXPECT_EQ(row.exclusion_reason, "too_large");
  EXPECT_EQ(row.error, "needs 80 GiB, the machine has 24");
  EXPECT_EQ(row.weights_bytes, 3 << 20);
  EXPECT_EQ(row.backend, "cpu");
  EXPECT_EQ(row.compiler_version, "2.5.1");
  EXPECT_EQ(row.library_version, "4.50.0");
  EXPECT_FALSE(row.revision.has_value());  // never resolved
  EXPECT_TRUE(dataset::check_row(row).ok()) << dataset::check_row(row).error().message();
}

TEST_F(VerdictRecorderTest, ALocalVerdictGoesToTheFolderTheDatasetAndTheJournal) {
  const VerdictRecorder recorder(dir_, SliceRole{}, dataset_);
  const dataset::VerdictRow failed = failed_verdict("org/broken");
  const RunTraces traces{"Traceback: unknown architecture\n", run::CompileCacheCounts{2, 3}, {}};
  ASSERT_TRUE(recorder.record(4, failed, traces).ok());

  auto results = dir_.read_results(0);
  ASSERT_TRUE(results.ok());
  ASSERT_THAT(keys(*results), ElementsAre(4));
  EXPECT_EQ(results->at(4).result, VerdictResult::kFailLoad);
  EXPECT_EQ(dir_.read_log(0, 4), "Traceback: unknown architecture\n");
  const auto rows = dataset_rows();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].model_id, "org/broken");
  EXPECT_THAT(dataset_logs(), ElementsAre(HasSubstr("Traceback: unknown architecture")));
  const auto journal = dir_.read_journal(0);
  ASSERT_EQ(journal.size(), 1u);
  EXPECT_EQ(journal[0]["event"], "done");
  EXPECT_EQ(journal[0]["item"], 4);
  EXPECT_EQ(journal[0]["result"], "FAIL_LOAD");
  EXPECT_EQ(journal[0]["compile_cache"], nlohmann::json({{"hits", 2}, {"misses", 3}}));
}

TEST_F(VerdictRecorderTest, AWorkersVerdictGoesToTheFolderOnly) {
  const VerdictRecorder recorder(dir_, SliceRole{1, true}, dataset_);
  ASSERT_TRUE(recorder.record(2, excluded_verdict(excluded("org/gated", "gated", "gated"))).ok());
  auto results = dir_.read_results(1);
  ASSERT_TRUE(results.ok());
  EXPECT_THAT(keys(*results), ElementsAre(2));
  EXPECT_TRUE(dataset_rows().empty()) << "the collect step fills the dataset";
  const auto journal = dir_.read_journal(1);
  ASSERT_EQ(journal.size(), 1u);
  EXPECT_EQ(journal[0]["result"], "EXCLUDED");
  EXPECT_FALSE(journal[0].contains("compile_cache"));
}

TEST_F(VerdictRecorderTest, CatchingUpGivesTheDatasetWhatTheFolderHolds) {
  // A canrun killed after writing its result files but before the dataset writes.
  const dataset::VerdictRow failed = failed_verdict("org/broken");
  const dataset::VerdictRow gated = excluded_verdict(excluded("org/gated", "gated", "gated"));
  ASSERT_TRUE(dir_.write_result(0, 0, failed, "the failure's log\n").ok());
  ASSERT_TRUE(dir_.write_result(0, 1, gated).ok());
  ASSERT_TRUE(dataset_rows().empty());

  const VerdictRecorder recorder(dir_, SliceRole{}, dataset_);
  ASSERT_TRUE(recorder.catch_up_dataset({{0, failed}, {1, gated}}).ok());
  std::vector<std::string> models;
  for (const auto& row : dataset_rows()) models.push_back(row.model_id);
  std::sort(models.begin(), models.end());
  EXPECT_THAT(models, ElementsAre("org/broken", "org/gated"));
  EXPECT_THAT(dataset_logs(), ElementsAre("the failure's log\n"));
  // Again: nothing changes.
  ASSERT_TRUE(recorder.catch_up_dataset({{0, failed}, {1, gated}}).ok());
  EXPECT_EQ(dataset_rows().size(), 2u);
}

TEST_F(VerdictRecorderTest, VerdictsRecordedOnceAreNotWrittenAgainOnResume) {
  const VerdictRecorder recorder(dir_, SliceRole{}, dataset_);
  const dataset::VerdictRow failed = failed_verdict("org/broken");
  const dataset::VerdictRow gated = excluded_verdict(excluded("org/gated", "gated", "gated"));
  ASSERT_TRUE(recorder.record(0, failed, {"the failure's log\n", std::nullopt, {}}).ok());
  ASSERT_TRUE(recorder.record(1, gated).ok());
  // The folder's results read back, as a resumed campaign reads them.
  auto results = dir_.read_results(0);
  ASSERT_TRUE(results.ok());
  ASSERT_EQ(results->size(), 2u);
  // Every file of the dataset (its stack file, card, logs) and when it was last written.
  const auto written = [&] {
    std::map<fs::path, fs::file_time_type> times;
    for (const auto& entry : fs::recursive_directory_iterator(dataset_.root())) {
      if (entry.is_regular_file()) times[entry.path()] = fs::last_write_time(entry.path());
    }
    return times;
  };
  const auto before = written();
  ASSERT_GE(before.size(), 2u);
  ASSERT_TRUE(recorder.catch_up_dataset(*results).ok());
  EXPECT_EQ(written(), before) << "the dataset held both verdicts: nothing to write";
  EXPECT_EQ(dataset_rows().size(), 2u);
  EXPECT_THAT(dataset_logs(), ElementsAre("the failure's log\n"));
}

// --- the scheduler and the first jobs ------------------------------------------------------------

TEST(SliceSchedulerTest, WorkersBeyondTheHostsCpusShareThem) {
  const auto profile = repository_profile("cpu");
  auto cores = machine_cores(profile, 8, {2, 16});
  ASSERT_TRUE(cores.ok());
  auto scheduler = slice_scheduler(std::move(*cores), {2, 16});
  ASSERT_TRUE(scheduler.ok()) << scheduler.error().message();
  EXPECT_EQ(scheduler->host().capacity().cpus, 8);
  // Eight one-core trials start at once on the two CPUs, as --cores 8 asked.
  for (std::size_t index = 0; index < 8; ++index) {
    WorkItem item = planned("org/m" + std::to_string(index));
    ASSERT_TRUE(scheduler->add(job_of(index, item, profile, {})).ok());
  }
  EXPECT_EQ(scheduler->start_ready(0).size(), 8u);
}

TEST(SliceSchedulerTest, DevicesDoNotAddHostCpus) {
  auto cores = machine_cores(repository_profile("neuron"), 0, {2, 16});
  ASSERT_TRUE(cores.ok());
  auto scheduler = slice_scheduler(std::move(*cores), {2, 16});
  ASSERT_TRUE(scheduler.ok());
  EXPECT_EQ(scheduler->host().capacity().cpus, 2);
  EXPECT_EQ(scheduler->cores().capacity(), 64);
}

TEST(FirstJobsTest, CheckpointsHereStartAtOnceTheOthersAreFetchedLongestFirst) {
  const std::vector<WorkItem> items = {
      planned("org/here"),
      planned("org/small", 1ull << 30),
      planned("org/large", 8ull << 30),
      excluded("org/not-run", "gated", "gated"),
      planned("org/medium", 4ull << 30),
      planned("org/also-small", 1ull << 30),
  };
  WorkItem unresolved = planned("org/unresolved");
  unresolved.revision.clear();
  std::vector<WorkItem> all = items;
  all.push_back(unresolved);
  const FirstJobs jobs =
      first_jobs({0, 1, 2, 4, 5, 6}, all, repository_profile("cpu"), {},
                 [](const WorkItem& item) { return item.model_id.str() == "org/here"; });
  std::vector<std::string> scheduled, to_fetch;
  for (const Job& job : jobs.scheduled) scheduled.push_back(job.id);
  for (const Job& job : jobs.to_fetch) to_fetch.push_back(job.id);
  // No planned commit: nothing to fetch ahead by, so it is scheduled at once.
  EXPECT_THAT(scheduled, ElementsAre("reference:0", "reference:6"));
  EXPECT_THAT(to_fetch, ElementsAre("2", "4", "1", "5"));  // ties keep the slice's order
}

}  // namespace
}  // namespace canrun::campaign
