#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <tuple>

#include "backend/profile.h"
#include "campaign/core_allocator.h"
#include "campaign/host_budget.h"

namespace canrun::campaign {
namespace {

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

}  // namespace
}  // namespace canrun::campaign
