#include "serve/background_loop.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace canrun::serve {
namespace {

using namespace std::chrono_literals;

//! Whether `count` reaches `at_least` within `limit`.
bool reaches(const std::atomic<int>& count, int at_least, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (count < at_least && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(1ms);
  }
  return count >= at_least;
}

TEST(BackgroundLoop, RunsAtOnceThenEveryPeriodUntilStopped) {
  {  // at once: with an hour's period, the one run there is can only be the first
    std::atomic<int> first{0};
    BackgroundLoop loop(std::chrono::hours(1), BackgroundLoop::FirstRun::kAtOnce, [&] { ++first; });
    EXPECT_TRUE(reaches(first, 1, 10s));
    std::this_thread::sleep_for(20ms);
    EXPECT_EQ(first, 1);
  }
  std::atomic<int> runs{0};
  BackgroundLoop loop(5ms, BackgroundLoop::FirstRun::kAtOnce, [&] { ++runs; });
  EXPECT_TRUE(reaches(runs, 3, 10s));
  loop.stop();
  loop.stop();  // idempotent
  const int stopped_at = runs;
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(runs, stopped_at);
  EXPECT_TRUE(loop.stopping());
}

// A loop that waits a long period first still stops at once: stop() wakes its wait.
TEST(BackgroundLoop, StopWakesTheWaitBeforeTheFirstRun) {
  std::atomic<int> runs{0};
  {
    BackgroundLoop loop(std::chrono::hours(1), BackgroundLoop::FirstRun::kAfterPeriod,
                        [&] { ++runs; });
    EXPECT_FALSE(loop.stopping());
  }  // the destructor stops it; an hour's wait would hang the test
  EXPECT_EQ(runs, 0);
}

// Work that waits between its own steps (the rankings refresher's retries) ends its wait when
// the loop stops.
TEST(BackgroundLoop, TheWorksOwnWaitsEndAtStop) {
  std::atomic<int> started{0};
  std::atomic<bool> woke_to_stop{false};
  BackgroundLoop* self = nullptr;
  std::atomic<bool> ready{false};
  BackgroundLoop loop(std::chrono::hours(1), BackgroundLoop::FirstRun::kAtOnce, [&] {
    while (!ready) std::this_thread::sleep_for(1ms);
    ++started;
    woke_to_stop = self->wait_or_stop(std::chrono::hours(1));
  });
  self = &loop;
  ready = true;
  ASSERT_TRUE(reaches(started, 1, 10s));
  loop.stop();
  EXPECT_TRUE(woke_to_stop);
}

}  // namespace
}  // namespace canrun::serve
