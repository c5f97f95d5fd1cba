#include "campaign/process_journal.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <future>
#include <string>
#include <thread>

#include "campaign/campaign_dir.h"
#include "core/test_temp_dir.h"
#include "process/process.h"

namespace canrun::campaign {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

//! A campaign folder and a launcher that journals to its slice 0, with a `sleep` started
//! through it as a run of the campaign would be.
class ProcessJournalTest : public ::testing::Test {
 protected:
  //! Starts `sleep 60` carrying CANRUN_CAMPAIGN=`campaign` (the folder's by default); returns
  //! once its group is in the journal.
  std::future<Result<process::ProcessOutcome>> start_sleep(std::string campaign = "") {
    process::ProcessSpec spec;
    spec.argv = {"sleep", "60"};
    spec.env = process::current_environment();
    spec.env[kCampaignVariable] = campaign.empty() ? dir_.path().string() : campaign;
    spec.timeout = 120s;
    const std::size_t before = process_events();
    auto running = std::async(std::launch::async, [this, spec] { return tracking_.run(spec); });
    for (auto deadline = std::chrono::steady_clock::now() + 10s;
         process_events() == before && std::chrono::steady_clock::now() < deadline;) {
      std::this_thread::sleep_for(10ms);
    }
    EXPECT_EQ(process_events(), before + 1) << "the sleep's group is journaled once it started";
    return running;
  }

  std::size_t process_events() const {
    std::size_t count = 0;
    for (const auto& event : campaign_.read_journal(0)) count += event["event"] == "process";
    return count;
  }

  static bool killed(std::future<Result<process::ProcessOutcome>>& running) {
    EXPECT_EQ(running.wait_for(10s), std::future_status::ready);
    auto outcome = running.get();
    EXPECT_TRUE(outcome.ok());
    return outcome.ok() && outcome->term_signal == SIGKILL;
  }

  canrun::testing::TempDir dir_{"process-journal"};
  CampaignDir campaign_{dir_.path()};
  std::unique_ptr<process::ProcessLauncher> posix_ = process::make_posix_launcher();
  TrackingLauncher tracking_{*posix_, campaign_, 0};
};

TEST_F(ProcessJournalTest, ALaterCanrunEndsWhatAKilledOneLeft) {
  auto left = start_sleep();
  // As a new canrun of the same campaign would, with only the folder to go by.
  EXPECT_EQ(end_leftover_processes(dir_.path(), 0), 1);
  EXPECT_TRUE(killed(left));
  EXPECT_EQ(end_leftover_processes(dir_.path(), 0), 0);  // nothing is left
}

TEST_F(ProcessJournalTest, ProcessesNotOfTheCampaignOrTheSliceAreLeftAlone) {
  // A process in a journaled group that does not carry this campaign's folder: a number
  // reused since, or another campaign's.
  auto other = start_sleep((dir_.path() / "another-campaign").string());
  EXPECT_EQ(end_leftover_processes(dir_.path(), 0), 0);
  // Another slice's journal does not name the group.
  auto ours = start_sleep();
  EXPECT_EQ(end_leftover_processes(dir_.path(), 1), 0);
  EXPECT_EQ(other.wait_for(0s), std::future_status::timeout) << "still running";
  EXPECT_EQ(ours.wait_for(0s), std::future_status::timeout) << "still running";
  tracking_.kill_all();
  EXPECT_TRUE(killed(other));
  EXPECT_TRUE(killed(ours));
}

TEST_F(ProcessJournalTest, KillAllEndsTheRunningGroupsAndEveryOneStartedAfter) {
  auto first = start_sleep();
  auto second = start_sleep();
  tracking_.kill_all();  // a stop request
  EXPECT_TRUE(killed(first));
  EXPECT_TRUE(killed(second));
  auto late = start_sleep();  // a stage's thread that started its run after the stop
  EXPECT_TRUE(killed(late));
}

TEST_F(ProcessJournalTest, MarkedProcessesCarryTheCampaignsFolder) {
  struct Unmark {  // the variable stays this test's: the tests after it run unmarked
    ~Unmark() { ::unsetenv(kCampaignVariable); }
  } unmark;
  mark_campaign_processes(dir_.path());
  EXPECT_EQ(process::current_environment()[kCampaignVariable], dir_.path().string());
  process::ProcessSpec spec;  // a run whose environment is this canrun's, as every run's is
  spec.argv = {"sleep", "60"};
  spec.env = process::current_environment();
  spec.timeout = 120s;
  auto running = std::async(std::launch::async, [&] { return tracking_.run(spec); });
  for (auto deadline = std::chrono::steady_clock::now() + 10s;
       process_events() == 0 && std::chrono::steady_clock::now() < deadline;) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(end_leftover_processes(dir_.path(), 0), 1);
  EXPECT_TRUE(killed(running));
}

}  // namespace
}  // namespace canrun::campaign
