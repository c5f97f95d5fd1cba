#include "dataset/dataset.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/atomic_file.h"
#include "dataset/card.h"
#include "dataset/parquet_codec.h"
#include "dataset/test_rows.h"
#include "verify/verification.h"

namespace canrun::dataset {
namespace {

namespace fs = std::filesystem;
using testing::at_seconds;
using ::testing::EndsWith;
using testing::full_row;
using ::testing::HasSubstr;
using testing::minimal_row;
using ::testing::StartsWith;

class DatasetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("canrun-dataset-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  StackKey key() const { return *stack_key_of(full_row()); }
  fs::path root_;
};

TEST_F(DatasetTest, UpsertWritesTheStackFileAndTheCard) {
  const DatasetDir data(root_);
  ASSERT_TRUE(
      data.upsert({full_row("org/a"), minimal_row("org/b", VerdictResult::kFailCompile)}).ok());
  EXPECT_TRUE(fs::exists(root_ / "data" /
                         "neuron__neuronx-cc-2.16.372.0+4a9b2326__transformers-5.18.0.parquet"));
  auto rows = data.read_stack(key());
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].model_id, "org/a");
  const std::string card = *read_file(root_ / "README.md");
  EXPECT_THAT(card, HasSubstr("data_files: \"data/*.parquet\""));
  EXPECT_THAT(
      card,
      HasSubstr(
          "| `neuron__neuronx-cc-2.16.372.0+4a9b2326__transformers-5.18.0.parquet` "
          "| neuron | neuronx-cc 2.16.372.0+4a9b2326 | transformers 5.18.0 | 2 | 1 | 1 | 0 |"));
}

// The card names every value of `verification` with the evidence behind it, and explains the
// teacher-forced agreement and the threshold a sharded run must reach.
TEST(CardTest, NamesEveryVerificationAndExplainsAgreement) {
  const std::string card = render_card({});
  for (const auto& info : verify::kVerifications) {
    EXPECT_THAT(card, HasSubstr(fmt::format("| `{}` | ", info.name)));
  }
  EXPECT_THAT(card, HasSubstr("`judge+agreement`"));
  EXPECT_THAT(card, HasSubstr("`agreement` is teacher-forced agreement with the CPU reference"));
  EXPECT_THAT(card, HasSubstr(fmt::format("A sharded run needs at least {:.2f} to PASS",
                                          verify::kAgreementThreshold)));
}

TEST_F(DatasetTest, NewerVerdictReplacesOlderKeyedByModelAndTask) {
  const DatasetDir data(root_);
  VerdictRow first = minimal_row("org/a", VerdictResult::kFailCompile);
  first.started_at = at_seconds(1000);
  VerdictRow other_task = minimal_row("org/a", VerdictResult::kPass);
  other_task.task = "image-text-to-text";
  ASSERT_TRUE(data.upsert({first, other_task, minimal_row("org/b", VerdictResult::kPass)}).ok());

  VerdictRow newer = minimal_row("org/a", VerdictResult::kPass);
  newer.started_at = at_seconds(2000);
  ASSERT_TRUE(data.upsert({newer}).ok());
  VerdictRow stale = minimal_row("org/a", VerdictResult::kCrash);
  stale.started_at = at_seconds(1500);
  ASSERT_TRUE(data.upsert({stale}).ok());

  auto rows = *data.read_stack(key());
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].model_id, "org/a");
  EXPECT_EQ(rows[0].task, "image-text-to-text");
  EXPECT_EQ(rows[1].task, "text-generation");
  EXPECT_EQ(rows[1].result,
            VerdictResult::kPass);  // the newer one; the stale CRASH did not replace it
  EXPECT_EQ(rows[1].started_at, at_seconds(2000));
  EXPECT_EQ(rows[2].model_id, "org/b");
}

// Rows written again as they are (a campaign's verdicts that stood) leave the file untouched;
// a changed row rewrites it.
TEST_F(DatasetTest, UnchangedRowsLeaveTheFileAlone) {
  const DatasetDir data(root_);
  const std::vector<VerdictRow> rows = {full_row("org/a"),
                                        minimal_row("org/b", VerdictResult::kPass)};
  ASSERT_TRUE(data.upsert(rows).ok());
  const fs::path file =
      root_ / "data" / "neuron__neuronx-cc-2.16.372.0+4a9b2326__transformers-5.18.0.parquet";
  const auto old_time = fs::file_time_type::clock::now() - std::chrono::hours(1);
  fs::last_write_time(file, old_time);
  ASSERT_TRUE(data.upsert(rows).ok());
  EXPECT_EQ(fs::last_write_time(file), old_time);
  VerdictRow changed = minimal_row("org/b", VerdictResult::kFailCompile);
  changed.started_at = rows[1].started_at;
  ASSERT_TRUE(data.upsert({changed}).ok());
  EXPECT_NE(fs::last_write_time(file), old_time);
  EXPECT_EQ((*data.read_stack(key()))[1].result, VerdictResult::kFailCompile);
}

TEST_F(DatasetTest, InvalidRowWritesNothing) {
  const DatasetDir data(root_);
  ASSERT_TRUE(data.upsert({full_row("org/a")}).ok());
  const std::string before = *read_file(data.file_of(key()));
  VerdictRow bad = full_row("org/b");
  bad.parallelism = "pp";
  Status status = data.upsert({full_row("org/c"), bad});
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(status.error().message(),
              HasSubstr("column parallelism is \"pp\", not none, tp or ep"));
  EXPECT_EQ(*read_file(data.file_of(key())), before);

  VerdictRow hostile = full_row("org/x");
  hostile.model_id = "org/x\"; import os";
  EXPECT_THAT(data.upsert({hostile}).error().message(),
              HasSubstr("column model_id invalid model id"));
  VerdictRow excluded = minimal_row("org/y", VerdictResult::kExcluded);
  excluded.exclusion_reason.reset();
  EXPECT_THAT(data.upsert({excluded}).error().message(),
              HasSubstr("exclusion_reason is empty but the result is EXCLUDED"));
  VerdictRow negative_time = full_row("org/t");
  negative_time.runtime_s = -1;
  EXPECT_THAT(data.upsert({negative_time}).error().message(),
              HasSubstr("column runtime_s is -1; it must be a finite number >= 0"));
  VerdictRow other_stack = full_row("org/z", "4.57.6");
  EXPECT_THAT(data.upsert({full_row("org/a"), other_stack}).error().message(),
              HasSubstr("rows of two stacks in one write"));
  EXPECT_EQ(*read_file(data.file_of(key())), before);
  VerdictRow judged = full_row("org/j");  // the judge's log-likelihoods are negative
  judged.judge_score = -1.25;
  judged.judge_threshold = -5.0;
  EXPECT_TRUE(data.upsert({judged}).ok());
  judged.judge_score = std::nan("");
  EXPECT_THAT(data.upsert({judged}).error().message(),
              HasSubstr("column judge_score is nan; it must be a finite number"));
  VerdictRow boxed = full_row("org/i");
  for (const char* isolation : {"none", "user,net,mount,pid,pids", "user,net,mount,pid", "net"}) {
    boxed.isolation = isolation;
    EXPECT_TRUE(data.upsert({boxed}).ok()) << isolation;
  }
  for (const char* isolation : {"", "sandbox", "pid,user", "user,user", "none,pids"}) {
    boxed.isolation = isolation;
    EXPECT_THAT(data.upsert({boxed}).error().message(),
                HasSubstr("column isolation is \"" + std::string(isolation) +
                          "\"; it must be none or parts of user,net,mount,pid,pids"))
        << isolation;
  }
}

TEST_F(DatasetTest, RefusesToOverwriteAnUnreadableFile) {
  const DatasetDir data(root_);
  fs::create_directories(data.data_dir());
  std::ofstream(data.file_of(key())) << "not parquet";
  Status status = data.upsert({full_row()});
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code(), ErrorCode::kCorrupt);
  EXPECT_THAT(status.error().message(), HasSubstr("not overwriting it"));
  EXPECT_EQ(*read_file(data.file_of(key())), "not parquet");
}

// A failure's log is kept beside the dataset (its end, valid UTF-8); a later PASS of the same
// model on the same stack removes it, since it no longer applies.
TEST_F(DatasetTest, FailureLogsAreKeptBoundedAndDroppedWhenTheVerdictPasses) {
  const DatasetDir data(root_);
  const VerdictRow failed = minimal_row("org/a", VerdictResult::kFailRuntime);
  const fs::path path = root_ / *log_relative_path(failed);
  EXPECT_EQ(*log_relative_path(failed),
            fs::path("logs") / key().stem() / "org" / "a" / "text-generation.log");
  std::string log = "start\n" + std::string(kMaxLogBytes, 'x') + "\nRuntimeError: boom \xff\n";
  ASSERT_TRUE(data.record_log(failed, log).ok());
  const std::string kept = *read_file(path);
  EXPECT_LE(kept.size(), kMaxLogBytes + 64);
  EXPECT_THAT(kept, StartsWith("[canrun: "));
  EXPECT_THAT(kept, EndsWith("RuntimeError: boom \xef\xbf\xbd\n"));  // U+FFFD for the bad byte

  ASSERT_TRUE(data.record_log(full_row("org/a"), "all good\n").ok());  // PASS
  EXPECT_FALSE(fs::exists(path));
  ASSERT_TRUE(data.record_log(failed, "").ok());  // no log: none kept, no error
  EXPECT_FALSE(fs::exists(path));
  VerdictRow sneaky = failed;
  sneaky.task = "../../x";
  EXPECT_FALSE(data.record_log(sneaky, "log").ok());
}

TEST_F(DatasetTest, LongErrorKeepsItsTailAndBadUtf8IsReplaced) {
  const DatasetDir data(root_);
  VerdictRow row = minimal_row("org/a", VerdictResult::kFailRuntime);
  std::string error = "Traceback (most recent call last):\n" + std::string(1 << 20, 'x');
  error += "\nRuntimeError: the real cause é";
  row.error = error;
  row.output_text = std::string("bad \xff\xfe bytes");
  ASSERT_TRUE(data.upsert({row}).ok());
  const VerdictRow stored = data.read_stack(key())->front();
  ASSERT_TRUE(stored.error.has_value());
  const std::string marker =
      fmt::format("[canrun: {} bytes cut from the start]\n", error.size() - kMaxErrorBytes);
  EXPECT_TRUE(stored.error->starts_with(marker)) << stored.error->substr(0, 80);
  EXPECT_EQ(stored.error->size(), marker.size() + kMaxErrorBytes);
  EXPECT_TRUE(stored.error->ends_with("RuntimeError: the real cause é"));
  EXPECT_EQ(stored.output_text, "bad \xEF\xBF\xBD\xEF\xBF\xBD bytes");
}

TEST_F(DatasetTest, ErrorCutNeverSplitsACharacter) {
  VerdictRow row = minimal_row("org/a", VerdictResult::kFailRuntime);
  // The last kMaxErrorBytes start inside the two bytes of "é": the cut drops it whole.
  row.error = "é" + std::string(kMaxErrorBytes - 1, 'a');
  apply_storage_policy(row);
  EXPECT_TRUE(row.error->starts_with("[canrun: 2 bytes cut from the start]\n"))
      << row.error->substr(0, 60);
  const std::string tail = row.error->substr(row.error->find('\n') + 1);
  EXPECT_TRUE(tail == std::string(kMaxErrorBytes - 1, 'a'))
      << "tail of " << tail.size() << " bytes";

  VerdictRow text = minimal_row("org/a", VerdictResult::kPass);
  text.output_text = std::string(kMaxOutputTextBytes - 1, 'b') + "é";  // "é" straddles the end
  apply_storage_policy(text);
  EXPECT_TRUE(text.output_text ==
              std::string(kMaxOutputTextBytes - 1, 'b') + "\n[canrun: 2 bytes cut]");
}

TEST_F(DatasetTest, LoadAllAndValidateReportBadFilesButReadGoodOnes) {
  const DatasetDir data(root_);
  ASSERT_TRUE(data.upsert({full_row("org/a")}).ok());
  ASSERT_TRUE(data.upsert({full_row("org/a", "4.57.6")}).ok());
  std::ofstream(data.data_dir() / "notes.txt") << "hello";
  const std::string good = *read_file(data.file_of(key()));
  ASSERT_TRUE(
      write_file_atomically(data.data_dir() / "cpu__inductor-2.13.0__transformers-5.18.0.parquet",
                            good.substr(0, good.size() - 10))
          .ok());
  std::ofstream(data.data_dir() / ".neuron.parquet.tmp-1-2") << "writer in progress";

  const DatasetSnapshot snapshot = data.load_all();
  EXPECT_EQ(snapshot.stacks.size(), 2u);
  ASSERT_EQ(snapshot.problems.size(), 2u);
  const auto problems = data.validate();
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_EQ(problems[0].path.filename(), "cpu__inductor-2.13.0__transformers-5.18.0.parquet");
  EXPECT_THAT(problems[0].problem, HasSubstr("truncated"));
  EXPECT_EQ(problems[1].path.filename(), "notes.txt");
  EXPECT_THAT(problems[1].problem, HasSubstr("only <stack>.parquet files belong in data/"));
  // stacks() goes by the names: the truncated file is a stack, notes.txt and the temp file not.
  std::vector<std::string> stems;
  for (const StackKey& stack : data.stacks()) stems.push_back(stack.stem());
  EXPECT_THAT(stems,
              ::testing::ElementsAre("cpu__inductor-2.13.0__transformers-5.18.0",
                                     "neuron__neuronx-cc-2.16.372.0+4a9b2326__transformers-4.57.6",
                                     key().stem()));
}

TEST_F(DatasetTest, ValidateFindsRowsInTheWrongFileAndDuplicates) {
  const DatasetDir data(root_);
  fs::create_directories(data.data_dir());
  std::vector<VerdictRow> rows = {full_row("org/a"), full_row("org/a"),
                                  full_row("org/b", "4.57.6")};
  ASSERT_TRUE(write_file_atomically(data.file_of(key()), *encode_parquet(rows)).ok());
  const auto problems = data.validate();
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_THAT(problems[0].problem, HasSubstr("row org/a (text-generation) appears more than once"));
  EXPECT_THAT(problems[0].problem,
              HasSubstr("row org/b (text-generation) belongs to stack "
                        "neuron · neuronx-cc 2.16.372.0+4a9b2326 · transformers 4.57.6"));
}

// Real processes: a writer replacing the file in a loop, a reader reading it in a loop.
TEST_F(DatasetTest, ReaderNeverSeesAPartialFileWhileAWriterReplacesIt) {
  const DatasetDir data(root_);
  ASSERT_TRUE(data.upsert({full_row("org/seed")}).ok());
  const pid_t writer = ::fork();
  ASSERT_GE(writer, 0);
  if (writer == 0) {
    for (int idx = 0; idx < 150; ++idx) {
      VerdictRow row = full_row("org/m" + std::to_string(idx % 40));
      row.error = std::string(static_cast<std::size_t>(idx % 7) * 20000, 'e');
      row.started_at = at_seconds(2'000'000'000 + idx);
      if (!data.upsert({row}).ok()) ::_exit(1);
    }
    ::_exit(0);
  }
  int reads = 0;
  int failures = 0;
  std::string first_failure;
  int status = 0;
  while (::waitpid(writer, &status, WNOHANG) == 0) {
    auto rows = read_parquet_rows(data.file_of(key()));
    ++reads;
    if (!rows.ok() || rows->empty()) {
      if (failures++ == 0) first_failure = rows.ok() ? "no rows" : rows.error().message();
    }
  }
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "writer failed";
  EXPECT_GT(reads, 10);
  EXPECT_EQ(failures, 0) << first_failure;
  EXPECT_EQ(data.read_stack(key())->size(), 41u);
}

// Two processes upserting different models into one stack at once lose no row.
TEST_F(DatasetTest, ConcurrentWritersLoseNoRow) {
  const DatasetDir data(root_);
  std::vector<pid_t> writers;
  for (int writer = 0; writer < 3; ++writer) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      for (int idx = 0; idx < 25; ++idx) {
        const std::string model = fmt::format("w{}/m{}", writer, idx);
        if (!data.upsert({minimal_row(model, VerdictResult::kPass)}).ok()) ::_exit(1);
      }
      ::_exit(0);
    }
    writers.push_back(pid);
  }
  for (const pid_t pid : writers) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  EXPECT_EQ(data.read_stack(key())->size(), 75u);
  EXPECT_TRUE(data.validate().empty());
}

}  // namespace
}  // namespace canrun::dataset
