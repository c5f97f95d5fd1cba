#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <set>
#include <tuple>

#include "backend/profile.h"
#include "campaign/core_allocator.h"
#include "campaign/expected_time.h"
#include "campaign/host_budget.h"
#include "campaign/scheduler.h"

namespace canrun::campaign {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// trn2.48xlarge as backends/neuron.toml describes it: 16 chips of 4 logical cores.
const backend::Topology kTrn2{4, 16, 24.0, 2.0, {1, 2, 4, 8, 16}, 16};
// Eight GPUs, one core each (backends/cuda.toml).
const backend::Topology kEightGpus{1, 8, 141.0, 4.0, {1, 2, 4, 8}, 8};
// The cpu profile's nominal topology: 64 "devices", which the allocator must not believe.
const backend::Topology kCpu{1, 64, 16.0, 1.0, {1, 2, 3, 4}, 4};

CoreAllocator make_allocator(std::string_view machine) {
  Result<CoreAllocator> made = invalid_argument("unknown machine");
  if (machine == "trn2") made = CoreAllocator::create(kTrn2, "range", 192);
  if (machine == "cuda8") made = CoreAllocator::create(kEightGpus, "list", 192);
  if (machine.starts_with("cpu:")) {
    made = CoreAllocator::create(kCpu, "count", std::stoi(std::string(machine.substr(4))));
  }
  EXPECT_TRUE(made.ok()) << machine;
  return std::move(made).value();
}

HostBudget make_budget(double cpus, double memory_gib) {
  auto budget = HostBudget::create({cpus, memory_gib});
  EXPECT_TRUE(budget.ok());
  return std::move(budget).value();
}

// --- the allocator as a table: steps in, grants out ----------------------------------------

//! One step: "NAME=K" asks for K cores under NAME and expects `grant` (describe_grant's
//! "0-3", "0,2-3", or "none"); "-NAME" releases what NAME holds.
struct Step {
  std::string action;
  std::string grant;
};

struct AllocatorCase {
  std::string name;
  std::string machine;  //!< trn2 (range), cuda8 (list), cpu:N (count, N host CPUs)
  std::vector<Step> steps;
};

const std::vector<AllocatorCase> kAllocatorCases = {
    {"trn2: small tests fill one chip, then the chip beside it",
     "trn2",
     {{"a=1", "0"},
      {"b=1", "1"},
      {"c=2", "2-3"},
      {"d=1", "4"},      // the pair of chips 0-1 is in use: stay in it
      {"e=4", "8-11"},   // a whole chip, in the four-chip block already in use
      {"f=8", "16-23"},  // two aligned chips
      {"g=16", "32-47"},
      {"h=2", "6-7"},  // aligned to 2, in the fullest chip that has a free pair
      {"i=1", "5"},
      {"j=1", "12"}}},
    {"trn2: aligned to the size, never across a chip; released cores are reused",
     "trn2",
     {{"a=1", "0"},
      {"b=2", "2-3"},  // not 1-2: a 2-core range starts on an even core
      {"c=1", "1"},
      {"d=2", "4-5"},
      {"e=4", "8-11"},  // not 6-9: a 4-core range is one whole chip
      {"-b", ""},
      {"f=2", "2-3"},  // reused: the fullest chip first
      {"-c", ""},
      {"-a", ""},
      {"g=4", "12-15"},  // chip 0 has 2-3 held: the 4 goes to the next free chip
      {"-f", ""},
      {"h=4", "0-3"}}},
    {"trn2: 8 and 16 take whole aligned chips; nothing is granted past the machine",
     "trn2",
     {{"a=16", "0-15"},
      {"b=16", "16-31"},
      {"c=16", "32-47"},
      {"d=16", "48-63"},
      {"e=1", "none"},
      {"-b", ""},
      {"f=8", "16-23"},
      {"g=8", "24-31"},
      {"h=8", "none"},
      {"-a", ""},
      {"-f", ""},
      {"i=16", "0-15"},  // 16-23 is free too, but 16-31 is not an aligned block any more
      {"j=8", "16-23"},
      {"k=1", "none"}}},
    {"trn2: a hole in a chip in use is filled before an empty chip is broken",
     "trn2",
     {{"a=4", "0-3"},
      {"b=1", "4"},
      {"c=1", "5"},
      {"d=1", "6"},
      {"e=1", "7"},
      {"-a", ""},
      {"-e", ""},
      {"f=1", "7"},  // not 0: chip 0 stays whole for a 4-core test
      {"g=4", "0-3"}}},
    {"trn2: a 3-core test stays inside one chip",
     "trn2",
     {{"a=1", "0"}, {"b=3", "1-3"}, {"c=3", "4-6"}, {"d=1", "7"}, {"e=3", "8-10"}}},
    {"cuda: a list keeps tests contiguous and aligned while it can, then takes any set",
     "cuda8",
     {{"a=1", "0"},
      {"b=4", "4-7"},
      {"c=2", "2-3"},
      {"d=1", "1"},
      {"e=1", "none"},
      {"-a", ""},
      {"-c", ""},
      {"f=3", "0,2-3"},  // no three contiguous GPUs are free: a list takes these
      {"-f", ""},
      {"-b", ""},
      {"g=2", "2-3"},  // aligned, beside the held GPU 1
      {"h=3", "4-6"}}},
    {"cpu: count packs against the host's 2 CPUs, not the profile's 64 devices",
     "cpu:2",
     {{"a=1", "0"},
      {"b=1", "1"},
      {"c=1", "none"},
      {"-a", ""},
      {"c=1", "0"},
      {"d=2", "none"},
      {"-b", ""},
      {"-c", ""},
      {"d=2", "0-1"},
      {"e=3", "none"}}},
    {"cpu: any free CPUs do for count",
     "cpu:4",
     {{"a=1", "0"}, {"b=1", "1"}, {"c=1", "2"}, {"-b", ""}, {"d=2", "1,3"}}},
};

//! The rules of the header, checked on every grant whatever the table says.
void expect_follows_rules(std::string_view machine, int count, const CoreGrant& grant) {
  EXPECT_EQ(grant.count(), count);
  if (machine != "trn2") return;
  ASSERT_TRUE(grant.contiguous()) << describe_grant(grant);
  const auto range = grant.range();
  if (count <= 4) {
    EXPECT_EQ(range.first / 4, (range.first + count - 1) / 4) << "crosses a chip";
    if (4 % count == 0) {
      EXPECT_EQ(range.first % count, 0) << "not aligned";
    }
  } else {
    EXPECT_EQ(range.first % count, 0) << "not on an aligned block of whole chips";
  }
}

TEST(CoreAllocatorTest, Table) {
  for (const auto& test_case : kAllocatorCases) {
    SCOPED_TRACE(test_case.name);
    auto allocator = make_allocator(test_case.machine);
    std::map<std::string, CoreGrant> held;
    for (const auto& step : test_case.steps) {
      SCOPED_TRACE(step.action);
      if (step.action.starts_with('-')) {
        const auto name = step.action.substr(1);
        ASSERT_TRUE(held.contains(name));
        ASSERT_TRUE(allocator.release(held[name]).ok());
        held.erase(name);
        continue;
      }
      const auto equals = step.action.find('=');
      const auto name = step.action.substr(0, equals);
      const int count = std::stoi(step.action.substr(equals + 1));
      const int free_before = allocator.free_cores();
      const auto grant = allocator.allocate(count);
      EXPECT_EQ(grant ? describe_grant(*grant) : "none", step.grant);
      if (!grant) {
        EXPECT_EQ(allocator.free_cores(), free_before);
        continue;
      }
      expect_follows_rules(test_case.machine, count, *grant);
      for (const auto& [other, other_grant] : held) {
        for (const auto& mine : grant->ranges) {
          for (const auto& theirs : other_grant.ranges) {
            EXPECT_TRUE(mine.first + mine.count <= theirs.first ||
                        theirs.first + theirs.count <= mine.first)
                << "overlaps " << other;
          }
        }
      }
      EXPECT_EQ(allocator.free_cores(), free_before - count);
      held[name] = *grant;
    }
  }
}

//! Random allocate/release on trn2: every grant follows the rules, none overlaps, and "none"
//! only when no aligned free range exists (checked by brute force).
TEST(CoreAllocatorTest, RandomStepsKeepTheRules) {
  auto allocator = make_allocator("trn2");
  std::mt19937 random(11);
  std::vector<int> owner(64, -1);
  std::map<int, CoreGrant> held;
  const int sizes[] = {1, 1, 1, 2, 2, 4, 8, 16};
  for (int step = 0; step < 5000; ++step) {
    if (!held.empty() && random() % 3 == 0) {
      auto victim = held.begin();
      std::advance(victim, random() % held.size());
      ASSERT_TRUE(allocator.release(victim->second).ok());
      for (int core = victim->second.range().first;
           core < victim->second.range().first + victim->second.range().count; ++core)
        owner[core] = -1;
      held.erase(victim);
      continue;
    }
    const int count = sizes[random() % 8];
    bool aligned_free = false;
    for (int start = 0; start + count <= 64; start += count) {
      bool all_free = true;
      for (int core = start; core < start + count; ++core) all_free = all_free && owner[core] < 0;
      aligned_free = aligned_free || all_free;
    }
    const auto grant = allocator.allocate(count);
    ASSERT_EQ(grant.has_value(), aligned_free) << "step " << step << ", " << count << " cores";
    if (!grant) continue;
    expect_follows_rules("trn2", count, *grant);
    for (int core = grant->range().first; core < grant->range().first + count; ++core) {
      ASSERT_EQ(owner[core], -1) << "core " << core << " granted twice";
      owner[core] = step;
    }
    held[step] = *grant;
  }
}

TEST(CoreAllocatorTest, FindKeepsAReservationFree) {
  auto allocator = make_allocator("trn2");
  const CoreGrant chips_0_to_3{{{0, 16}}};
  const auto grant = allocator.find(4, &chips_0_to_3);
  ASSERT_TRUE(grant);
  EXPECT_EQ(describe_grant(*grant), "16-19");
  EXPECT_EQ(allocator.free_cores(), 64);  // find takes nothing
}

TEST(CoreAllocatorTest, TakeAndReleaseRefuseWhatIsNotTheirs) {
  auto allocator = make_allocator("trn2");
  ASSERT_TRUE(allocator.take({{{0, 4}}}).ok());
  const auto twice = allocator.take({{{2, 2}}});
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.error().message(), "cannot take cores 2-3: core 2 is already held");
  EXPECT_EQ(allocator.release({{{4, 1}}}).error().message(),
            "cannot release cores 4: core 4 is not held");
  EXPECT_EQ(allocator.take({{{62, 4}}}).error().message(),
            "cannot take cores 62-65: core 64 is not on this machine");
  // Refused half-way: nothing changed.
  EXPECT_FALSE(allocator.take({{{8, 2}, {9, 1}}}).ok());
  EXPECT_TRUE(allocator.is_free(8));
  EXPECT_EQ(allocator.free_cores(), 60);
}

TEST(CoreAllocatorTest, ProfilesOfTheRepository) {
  for (const auto& [name, capacity, syntax] :
       {std::tuple{"neuron", 64, "range"}, std::tuple{"cuda", 8, "list"},
        std::tuple{"cpu", 2, "count"}}) {
    auto profile =
        backend::load_profile(std::string(CANRUN_SOURCE_DIR) + "/backends/" + name + ".toml");
    ASSERT_TRUE(profile.ok()) << profile.error().message();
    auto allocator = CoreAllocator::for_profile(*profile, 2);
    ASSERT_TRUE(allocator.ok()) << allocator.error().message();
    EXPECT_EQ(allocator->capacity(), capacity) << name;
    EXPECT_EQ(allocator->syntax(), syntax) << name;
  }
}

TEST(CoreAllocatorTest, CreateRefusesWhatCannotBePacked) {
  EXPECT_EQ(CoreAllocator::create(kTrn2, "ranges", 1).error().message(),
            "pinning syntax \"ranges\" is not range, list or count: a campaign cannot place tests "
            "by it");
  EXPECT_EQ(CoreAllocator::create(kCpu, "count", 0).error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(CoreAllocator::create({0, 16, 24, 2, {1}, 1}, "range", 1).error().code(),
            ErrorCode::kInvalidArgument);
  backend::BackendProfile nameless;
  nameless.name = "custom";
  EXPECT_THAT(CoreAllocator::for_profile(nameless, 4).error().message(),
              HasSubstr("backend profile custom: pinning syntax \"\""));
}

TEST(CoreAllocatorTest, GrantPinningValue) {
  backend::BackendProfile neuron, cuda, cpu;
  neuron.pinning_env = "NEURON_RT_VISIBLE_CORES";
  neuron.pinning_syntax = "range";
  cuda.pinning_env = "CUDA_VISIBLE_DEVICES";
  cuda.pinning_syntax = "list";
  cpu.pinning_env = "OMP_NUM_THREADS";
  cpu.pinning_syntax = "count";
  EXPECT_EQ(grant_pinning_value(neuron, {{{8, 4}}}), "8-11");
  EXPECT_EQ(grant_pinning_value(cuda, {{{0, 1}, {2, 2}}}), "0,2,3");
  EXPECT_EQ(grant_pinning_value(cpu, {{{0, 2}}}), std::nullopt);
  EXPECT_EQ(grant_pinning_value(neuron, {{{0, 1}, {2, 2}}}), std::nullopt);
}

// --- host budget ---------------------------------------------------------------------------

TEST(HostBudgetTest, CapsCpusAndMemory) {
  auto budget = make_budget(8, 100);
  EXPECT_TRUE(budget.fits({8, 100}));
  EXPECT_FALSE(budget.fits({8.5, 1}));
  ASSERT_TRUE(budget.take({3, 60}).ok());
  EXPECT_FALSE(budget.fits({1, 60}));  // memory is short
  EXPECT_FALSE(budget.fits({6, 1}));   // CPUs are short
  const auto refused = budget.take({6, 1});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message(), "host share of 6 CPUs does not fit: 5 of 8 are free");
  EXPECT_TRUE(budget.give_back({3, 60}).ok());
  EXPECT_EQ(budget.give_back({0.001, 0}).error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(budget.available().cpus, 8);
}

TEST(HostBudgetTest, FractionsNeverDrift) {
  auto budget = make_budget(1, 1);
  for (int round = 0; round < 1000; ++round) {
    for (int share = 0; share < 10; ++share) ASSERT_TRUE(budget.take({0.1, 0.05}).ok());
    EXPECT_FALSE(budget.fits({0.1, 0}));
    for (int share = 0; share < 10; ++share) ASSERT_TRUE(budget.give_back({0.1, 0.05}).ok());
  }
  EXPECT_EQ(budget.available().cpus, 1);
  EXPECT_EQ(budget.available().memory_gib, 1);
}

TEST(HostBudgetTest, CreateRefusesAnEmptyHost) {
  EXPECT_EQ(HostBudget::create({0, 10}).error().message(),
            "host CPU count 0 is not a positive number");
  EXPECT_EQ(HostBudget::create({4, std::nan("")}).error().code(), ErrorCode::kInvalidArgument);
}

TEST(HostResourcesTest, ThisMachine) {
  const auto host = host_resources();
  ASSERT_TRUE(host.ok()) << host.error().message();
  EXPECT_GE(host->cpus, 1);
  EXPECT_GT(host->memory_gib, 0.1);
}

TEST(HostResourcesTest, MeminfoTotal) {
  EXPECT_EQ(meminfo_total_gib("MemFree:  100 kB\nMemTotal:       2097152 kB\n").value(), 2.0);
  EXPECT_EQ(meminfo_total_gib("MemFree: 1 kB\n").error().message(),
            "/proc/meminfo has no MemTotal line");
  EXPECT_EQ(meminfo_total_gib("MemTotal: lots\n").error().message(),
            "/proc/meminfo line \"MemTotal: lots\" is not a memory size in kB");
  EXPECT_EQ(meminfo_total_gib("MemTotal: 12 MB").error().code(), ErrorCode::kCorrupt);
}

// --- scheduler -----------------------------------------------------------------------------

Scheduler make_scheduler(std::string_view machine, double cpus = 192, double memory_gib = 2048) {
  return Scheduler(make_allocator(machine), make_budget(cpus, memory_gib));
}

std::vector<std::string> ids_of(const std::vector<JobStart>& started) {
  std::vector<std::string> ids;
  for (const auto& start : started) ids.push_back(start.id);
  return ids;
}

TEST(SchedulerTest, LongestExpectedFirst) {
  auto scheduler = make_scheduler("cpu:2");
  ASSERT_TRUE(scheduler.add({"short", 1, 0, 1, 10}).ok());
  ASSERT_TRUE(scheduler.add({"long", 1, 0, 1, 30}).ok());
  ASSERT_TRUE(scheduler.add({"middle", 1, 0, 1, 20}).ok());
  ASSERT_TRUE(scheduler.add({"middle-too", 1, 0, 1, 20}).ok());
  EXPECT_THAT(ids_of(scheduler.start_ready(0)), ElementsAre("long", "middle"));
  EXPECT_EQ(scheduler.pending(), 2U);
  EXPECT_EQ(scheduler.running(), 2U);
  ASSERT_TRUE(scheduler.finish("middle").ok());
  EXPECT_THAT(ids_of(scheduler.start_ready(20)), ElementsAre("middle-too"));
  ASSERT_TRUE(scheduler.finish("long").ok());
  EXPECT_THAT(ids_of(scheduler.start_ready(30)), ElementsAre("short"));
  ASSERT_TRUE(scheduler.finish("middle-too").ok());
  ASSERT_TRUE(scheduler.finish("short").ok());
  EXPECT_TRUE(scheduler.idle());
}

TEST(SchedulerTest, AVerificationIsTakenBeforeRunsNotStartedYet) {
  // cpu:2 with 2 host CPUs: the runs hold both; a verification (host work, one CPU) that came
  // after longer runs starts as soon as a CPU frees, not after the last run.
  auto scheduler = make_scheduler("cpu:2", 2, 16);
  for (int idx = 0; idx < 4; ++idx) {
    ASSERT_TRUE(scheduler.add({"run" + std::to_string(idx), 1, 0, 1, 60}).ok());
  }
  EXPECT_THAT(ids_of(scheduler.start_ready(0)), ElementsAre("run0", "run1"));
  ASSERT_TRUE(scheduler.finish("run0").ok());
  Job verify{"verify:0", 0, 1, 1, 6};
  verify.finishing = true;
  ASSERT_TRUE(scheduler.add(verify).ok());
  EXPECT_THAT(ids_of(scheduler.start_ready(60)), ElementsAre("verify:0"));
  ASSERT_TRUE(scheduler.finish("verify:0").ok());
  EXPECT_THAT(ids_of(scheduler.start_ready(66)), ElementsAre("run2"));
}

TEST(SchedulerTest, TwoHostCpusNeverRunMoreThanTwoOneCoreTests) {
  auto scheduler = make_scheduler("cpu:2", 2, 16);
  for (int idx = 0; idx < 10; ++idx) {
    ASSERT_TRUE(scheduler.add({"t" + std::to_string(idx), 1, 0, 1, 10.0 + idx}).ok());
  }
  std::vector<std::string> running;
  double now = 0;
  while (!scheduler.idle()) {
    for (auto& start : scheduler.start_ready(now)) running.push_back(start.id);
    ASSERT_LE(running.size(), 2U);
    ASSERT_FALSE(running.empty());
    ASSERT_TRUE(scheduler.finish(running.front()).ok());
    running.erase(running.begin());
    now += 1;
  }
  // A test that declares host CPUs beside its worker holds them too: one at a time.
  ASSERT_TRUE(scheduler.add({"with-reference-a", 1, 1, 1, 10}).ok());
  ASSERT_TRUE(scheduler.add({"with-reference-b", 1, 1, 1, 10}).ok());
  EXPECT_EQ(scheduler.start_ready(now).size(), 1U);
}

TEST(SchedulerTest, HostCpusCapTestsThatCoresWouldAllow) {
  auto scheduler = make_scheduler("trn2", 8, 2048);
  for (int idx = 0; idx < 10; ++idx) {
    ASSERT_TRUE(scheduler.add({"t" + std::to_string(idx), 1, 3, 1, 100}).ok());
  }
  EXPECT_EQ(scheduler.start_ready(0).size(), 2U);  // 3 + 3 of 8 CPUs; 62 cores left idle
  EXPECT_EQ(scheduler.cores().free_cores(), 62);
  EXPECT_EQ(scheduler.host().available().cpus, 2);
}

TEST(SchedulerTest, HostMemoryCapsTests) {
  auto scheduler = make_scheduler("trn2", 192, 100);
  ASSERT_TRUE(scheduler.add({"big-reference", 1, 1, 60, 100}).ok());
  ASSERT_TRUE(scheduler.add({"big-reference-2", 1, 1, 60, 90}).ok());
  ASSERT_TRUE(scheduler.add({"small", 1, 1, 30, 10}).ok());
  // The second does not fit beside the first; "small" ends before it could start: back-fill.
  EXPECT_THAT(ids_of(scheduler.start_ready(0)), ElementsAre("big-reference", "small"));
  EXPECT_DOUBLE_EQ(scheduler.host().available().memory_gib, 10);
  ASSERT_TRUE(scheduler.finish("small").ok());
  EXPECT_TRUE(scheduler.start_ready(10).empty());  // 60 + 60 > 100, with 63 cores free
  ASSERT_TRUE(scheduler.finish("big-reference").ok());
  EXPECT_THAT(ids_of(scheduler.start_ready(100)), ElementsAre("big-reference-2"));
}

//! One chip of 4 cores. Four 1-core tests run, expected to end at 10, 20, 30 and 40; a 4-core
//! test waits. Without a reservation the 1-core tests behind it would take each core as it
//! frees, and it would wait as long as they keep coming.
class NoStarvationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cores = CoreAllocator::create({4, 1, 24, 2, {1, 2, 4}, 4}, "range", 1);
    ASSERT_TRUE(cores.ok());
    scheduler_.emplace(std::move(cores).value(), make_budget(192, 2048));
    for (int idx = 1; idx <= 4; ++idx) {
      ASSERT_TRUE(scheduler_->add({"run" + std::to_string(idx), 1, 0, 0, 10.0 * idx}).ok());
    }
    ASSERT_EQ(scheduler_->start_ready(0).size(), 4U);
    ASSERT_TRUE(scheduler_->add({"big", 4, 0, 0, 100}).ok());
  }
  std::optional<Scheduler> scheduler_;
};

TEST_F(NoStarvationTest, BigTestStartsWhenItsCoresAreExpectedFree) {
  auto& scheduler = *scheduler_;
  // Small tests keep coming: one every 5 s, each expected to take 35 s, so each would end after
  // 40, when "big" can start.
  int added = 0;
  std::vector<std::pair<double, std::string>> starts;
  const std::map<double, std::string> ends = {
      {10, "run1"}, {20, "run2"}, {30, "run3"}, {40, "run4"}};
  for (double now = 5; now <= 40; now += 5) {
    ASSERT_TRUE(scheduler.add({"stream" + std::to_string(added++), 1, 0, 0, 35}).ok());
    if (ends.contains(now)) {
      ASSERT_TRUE(scheduler.finish(ends.at(now)).ok());
    }
    for (const auto& start : scheduler.start_ready(now)) starts.emplace_back(now, start.id);
  }
  ASSERT_FALSE(starts.empty());
  EXPECT_EQ(starts.front(), (std::pair<double, std::string>{40, "big"}));
  EXPECT_EQ(starts.size(), 1U) << "a stream test started before big";
}

TEST_F(NoStarvationTest, BackFillsWhatEndsInTime) {
  auto& scheduler = *scheduler_;
  ASSERT_TRUE(scheduler.add({"ends-at-45", 1, 0, 0, 35}).ok());
  ASSERT_TRUE(scheduler.add({"ends-at-35", 1, 0, 0, 25}).ok());
  ASSERT_TRUE(scheduler.finish("run1").ok());
  EXPECT_THAT(ids_of(scheduler.start_ready(10)), ElementsAre("ends-at-35"));
  ASSERT_TRUE(scheduler.finish("run2").ok());
  EXPECT_TRUE(scheduler.start_ready(20).empty());
}

TEST_F(NoStarvationTest, AnOverrunDelaysTheBigTestOnlyByItself) {
  auto& scheduler = *scheduler_;
  ASSERT_TRUE(scheduler.add({"small", 1, 0, 0, 5}).ok());
  for (const auto& [now, id] : {std::pair{10.0, "run1"}, {20.0, "run2"}, {30.0, "run3"}}) {
    ASSERT_TRUE(scheduler.finish(id).ok());
    // "small" would end by 40 and is welcome at 10; none other fits.
    const auto started = ids_of(scheduler.start_ready(now));
    if (now == 10) {
      EXPECT_THAT(started, ElementsAre("small"));
      ASSERT_TRUE(scheduler.finish("small").ok());
    } else {
      EXPECT_TRUE(started.empty());
    }
  }
  ASSERT_TRUE(scheduler.add({"late-small", 1, 0, 0, 1}).ok());
  // run4 was expected to end at 40 and is still running at 45: it counts as about to end, so
  // nothing may take the cores "big" waits for, however short.
  EXPECT_TRUE(scheduler.start_ready(45).empty());
  ASSERT_TRUE(scheduler.finish("run4").ok());
  EXPECT_THAT(ids_of(scheduler.start_ready(50)), ElementsAre("big"));
}

TEST(SchedulerTest, BackFillKeepsOffTheReservationOnTrn2) {
  auto scheduler = make_scheduler("trn2");
  for (const Job& job : {Job{"a", 16, 0, 0, 1000}, Job{"b", 16, 0, 0, 900}, Job{"c", 16, 0, 0, 800},
                         Job{"d2", 8, 0, 0, 200}, Job{"d1", 8, 0, 0, 100}}) {
    ASSERT_TRUE(scheduler.add(job).ok());
  }
  const auto first = scheduler.start_ready(0);
  ASSERT_EQ(first.size(), 5U);
  EXPECT_EQ(describe_grant(first[3].cores), "48-55");
  ASSERT_TRUE(scheduler.add({"head", 16, 0, 0, 500}).ok());
  ASSERT_TRUE(scheduler.add({"long-4", 4, 0, 0, 400}).ok());
  ASSERT_TRUE(scheduler.add({"short-4", 4, 0, 0, 50}).ok());
  ASSERT_TRUE(scheduler.finish("d1").ok());
  // "head" gets 48-63 when d2 ends at 200. long-4 would hold 56-59 past it; short-4 ends by it.
  const auto backfilled = scheduler.start_ready(100);
  ASSERT_THAT(ids_of(backfilled), ElementsAre("short-4"));
  EXPECT_EQ(describe_grant(backfilled[0].cores), "56-59");
  ASSERT_TRUE(scheduler.finish("short-4").ok());
  EXPECT_TRUE(scheduler.start_ready(150).empty());
  ASSERT_TRUE(scheduler.finish("d2").ok());
  const auto head = scheduler.start_ready(200);
  ASSERT_THAT(ids_of(head), ElementsAre("head"));
  EXPECT_EQ(describe_grant(head[0].cores), "48-63");
}

// Host work (a CPU reference after its device run): no cores, only the host's CPUs and memory.
TEST(SchedulerTest, HostWorkRunsBesideFullCoresWithinTheHost) {
  auto scheduler = make_scheduler("trn2", 4, 2048);
  ASSERT_TRUE(scheduler.add({"whole-machine", 64, 1, 1, 100}).ok());
  ASSERT_TRUE(scheduler.add({"reference-a", 0, 2, 40, 10}).ok());
  ASSERT_TRUE(scheduler.add({"reference-b", 0, 2, 40, 10}).ok());
  // Every core is held, 3 of 4 host CPUs are free: one reference fits beside the device test.
  EXPECT_THAT(ids_of(scheduler.start_ready(0)), ElementsAre("whole-machine", "reference-a"));
  EXPECT_EQ(scheduler.cores().free_cores(), 0);
  EXPECT_TRUE(scheduler.start_ready(1).empty());
  ASSERT_TRUE(scheduler.finish("reference-a").ok());
  EXPECT_THAT(ids_of(scheduler.start_ready(10)), ElementsAre("reference-b"));
  ASSERT_TRUE(scheduler.finish("reference-b").ok());
  ASSERT_TRUE(scheduler.finish("whole-machine").ok());
  EXPECT_TRUE(scheduler.idle());
  EXPECT_EQ(scheduler.cores().free_cores(), 64);
  // On `count` profiles (cpu) host work takes its CPUs like a worker does.
  auto cpu = make_scheduler("cpu:2", 2, 16);
  ASSERT_TRUE(cpu.add({"device", 1, 0, 1, 10}).ok());
  ASSERT_TRUE(cpu.add({"ref-1", 0, 1, 1, 5}).ok());
  ASSERT_TRUE(cpu.add({"ref-2", 0, 1, 1, 5}).ok());
  EXPECT_THAT(ids_of(cpu.start_ready(0)), ElementsAre("device", "ref-1"));
}

TEST(SchedulerTest, AddRefusesWhatCouldNeverRun) {
  auto scheduler = make_scheduler("trn2", 192, 2048);
  ASSERT_TRUE(scheduler.add({"m", 1, 0, 0, 1}).ok());
  EXPECT_EQ(scheduler.add({"m", 1, 0, 0, 1}).error().message(), "test \"m\" is already scheduled");
  EXPECT_EQ(scheduler.add({"", 1, 0, 0, 1}).error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(scheduler.add({"huge", 128, 0, 0, 1}).error().message(),
            "test \"huge\" needs 128 cores; this machine has 64 (range pinning)");
  EXPECT_EQ(scheduler.add({"zero", 0, 0, 0, 1}).error().message(),
            "test \"zero\" needs no cores and no host CPUs: it is no work");
  EXPECT_EQ(scheduler.add({"negative", -1, 1, 0, 1}).error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(scheduler.add({"hungry", 1, 1, 4096, 1}).error().message(),
            "test \"hungry\" needs 1 host CPUs and 4096 GiB of host memory; the host has 192 and "
            "2048.0 GiB");
  EXPECT_EQ(scheduler.add({"never", 1, 0, 0, -1}).error().message(),
            "test \"never\": expected_s = -1 is not a number >= 0");
  EXPECT_EQ(scheduler.finish("m").error().code(), ErrorCode::kNotFound);
  EXPECT_EQ(scheduler.pending(), 1U);
}

//! A random campaign on trn2 with estimates that are often wrong: everything runs once, and the
//! books never disagree (no overlap, no host oversubscription) at any moment.
TEST(SchedulerTest, RandomCampaignRunsEveryTestOnce) {
  auto scheduler = make_scheduler("trn2", 48, 512);
  std::mt19937 random(5);
  const int sizes[] = {1, 1, 1, 1, 1, 1, 2, 2, 4, 8, 16};
  std::map<std::string, double> actual_s;
  for (int idx = 0; idx < 300; ++idx) {
    const auto id = "t" + std::to_string(idx);
    const double expected = 10 + random() % 500;
    actual_s[id] = expected * (0.5 + (random() % 100) / 100.0);
    ASSERT_TRUE(
        scheduler.add({id, sizes[random() % 11], 1.0 + random() % 8, 4.0 + random() % 60, expected})
            .ok());
  }
  std::multimap<double, std::string> ends;
  std::set<std::string> done;
  double now = 0;
  while (!scheduler.idle()) {
    for (const auto& start : scheduler.start_ready(now)) {
      ASSERT_FALSE(done.contains(start.id));
      ends.emplace(now + actual_s.at(start.id), start.id);
    }
    ASSERT_FALSE(ends.empty()) << "nothing runs and " << scheduler.pending() << " wait";
    ASSERT_GE(scheduler.host().available().cpus, 0);
    now = ends.begin()->first;
    ASSERT_TRUE(scheduler.finish(ends.begin()->second).ok());
    done.insert(ends.begin()->second);
    ends.erase(ends.begin());
  }
  EXPECT_EQ(done.size(), 300U);
  EXPECT_EQ(scheduler.cores().free_cores(), 64);
  EXPECT_EQ(scheduler.host().available().cpus, 48);
}

// --- expected time -------------------------------------------------------------------------

TEST(ExpectedTimeTest, LinePerBackend) {
  const std::uint64_t gib = 1ULL << 30;
  EXPECT_DOUBLE_EQ(expected_seconds({"org/m", "neuron", 15 * gib, 1}), 300 + 120 * 15);
  EXPECT_DOUBLE_EQ(expected_seconds({"org/m", "neuron", 60 * gib, 4}), 300 + 120 * 60 + 30 * 3);
  EXPECT_DOUBLE_EQ(expected_seconds({"org/m", "cuda", 2 * gib, 2}), 60 + 10 * 2 + 15);
  EXPECT_DOUBLE_EQ(expected_seconds({"org/m", "cpu", gib / 2, 1}), 30 + 45);
  EXPECT_DOUBLE_EQ(expected_seconds({"org/m", "tpu", 0, 1}), 300);  // unknown: neuron's
  EXPECT_DOUBLE_EQ(expected_seconds({"org/m", "x", gib, 3}, TimeModel{1, 2, 3}), 1 + 2 + 6);
}

TEST(ExpectedTimeTest, HistoryWinsLatestRowFirst) {
  RuntimeHistory history;
  const auto day = [](int days) { return UtcTime{} + std::chrono::days(days); };
  history.record("org/m", "neuron", day(1), 500);
  history.record("org/m", "neuron", day(3), 700);
  history.record("org/m", "neuron", day(2), 900);  // older than day 3: ignored
  history.record("org/m", "neuron", day(4), 0);    // no runtime: ignored
  history.record("org/m", "cpu", day(1), 40);
  EXPECT_EQ(history.runtime_s("org/m", "neuron"), 700);
  EXPECT_DOUBLE_EQ(expected_seconds({"org/m", "neuron", 1ULL << 40, 16}, &history), 700);
  EXPECT_DOUBLE_EQ(expected_seconds({"org/m", "cpu", 0, 1}, &history), 40);
  EXPECT_DOUBLE_EQ(expected_seconds({"org/other", "neuron", 0, 1}, &history), 300);
  EXPECT_EQ(history.size(), 2U);
}

TEST(ExpectedTimeTest, HistoryFromDatasetRows) {
  dataset::VerdictRow timed, excluded;
  timed.model_id = excluded.model_id = "org/m";
  timed.backend = excluded.backend = "neuron";
  timed.runtime_s = 1234;
  excluded.result = VerdictResult::kExcluded;
  excluded.started_at = dataset::Timestamp{} + std::chrono::hours(48);
  RuntimeHistory history;
  history.record_rows({timed, excluded});
  EXPECT_EQ(history.runtime_s("org/m", "neuron"), 1234);
}

}  // namespace
}  // namespace canrun::campaign
