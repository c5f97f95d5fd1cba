#include "cli/campaign_progress.h"

#include <gtest/gtest.h>

#include <string>

namespace canrun::cli {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

campaign::WorkItem item(std::string model_id) {
  return campaign::WorkItem(*ModelId::parse(model_id), "text-generation");
}

TEST(CampaignProgressMessages, NameTheItemAndWhatHappened) {
  EXPECT_EQ(planned_message(5, 3), "campaign: 5 items planned, 3 to run now");
  EXPECT_EQ(started_message(item("org/a"), "0-3"), "start   org/a (text-generation) on cores 0-3");
  EXPECT_EQ(verifying_message(item("org/a"), "CPU reference, judge"),
            "verify  org/a (text-generation) on the host: CPU reference, judge");
  EXPECT_EQ(failed_message(item("org/a"), io_error("disk full")),
            "org/a (text-generation) could not run: disk full");
}

TEST(CampaignProgressMessages, FinishedGivesTheRunTimeWhenMeasured) {
  dataset::VerdictRow row;
  row.result = VerdictResult::kFailCompile;
  EXPECT_EQ(finished_message(item("org/a"), row), "done    org/a (text-generation): FAIL_COMPILE");
  row.result = VerdictResult::kPass;
  row.runtime_s = 12.34;
  EXPECT_EQ(finished_message(item("org/a"), row),
            "done    org/a (text-generation): PASS in 12.3 s");
}

TEST(ProgressStatus, ShowsTheRunningItemsWithWhereAndHowLong) {
  const ProgressStatus::Clock::time_point start;
  ProgressStatus status(start);
  EXPECT_EQ(status.line(start), "[0/0]");
  status.planned(4, start);
  status.running("text-generation/org/a", "0-1", start);
  status.running("text-generation/org/b", "2-3", start + seconds(2));
  EXPECT_EQ(status.line(start + milliseconds(5400)),
            "[0/4] | text-generation/org/a @0-1 5s | text-generation/org/b @2-3 3s");
}

TEST(ProgressStatus, CountsEachResultAndExpectsTheRestAtTheRateSoFar) {
  const ProgressStatus::Clock::time_point start;
  ProgressStatus status(start);
  status.planned(4, start + seconds(1));
  status.running("text-generation/org/a", "0-1", start + seconds(1));
  status.ended("text-generation/org/a", "PASS");
  status.running("text-generation/org/b", "0-1", start + seconds(5));
  // Verified on the host: the same item, now shown where its verification runs.
  status.running("text-generation/org/b", "host", start + seconds(9));
  EXPECT_EQ(status.line(start + seconds(11)),
            "[1/4] PASS 1 | text-generation/org/b @host 2s | ETA 30s");
  status.ended("text-generation/org/b", "error");
  status.ended("text-generation/org/c", "FAIL_OOM");
  EXPECT_EQ(status.line(start + seconds(13)), "[3/4] FAIL_OOM 1 PASS 1 error 1 | ETA 4s");
}

TEST(ProgressStatus, NoExpectedTimeOnceEverythingEnded) {
  const ProgressStatus::Clock::time_point start;
  ProgressStatus status(start);
  status.planned(1, start);
  status.ended("text-generation/org/a", "PASS");
  EXPECT_EQ(status.line(start + seconds(3)), "[1/1] PASS 1");
}

TEST(ProgressStatus, LineIsCutToFitOneTerminalLine) {
  const ProgressStatus::Clock::time_point start;
  ProgressStatus status(start);
  status.planned(2, start);
  status.running("text-generation/org/" + std::string(300, 'm'), "0", start);
  const std::string line = status.line(start);
  EXPECT_EQ(line.size(), 200u);
  EXPECT_TRUE(line.starts_with("[0/2] | text-generation/org/mmm"));
}

}  // namespace
}  // namespace canrun::cli
