// Campaign packing: a simulated campaign of the original Space's scale on one trn2.48xlarge,
// through the real Scheduler driven by a simulated clock. The baseline is the lower bound on the
// makespan of the same tests: the largest of device core-seconds ÷ 64 cores, host CPU-seconds ÷
// 192 CPUs, host GiB-seconds ÷ 2048 GiB and the longest test. No schedule beats it, so
// makespan ÷ bound is how much packing loses (target <= 1.05).
//
// The tests (seeded): 70 % text-generation, 30 % image-text-to-text; cores 60 % 1, 20 % 2,
// 10 % 4, 7 % 8, 3 % 16; weights log-uniform over what that core count holds (more than half of
// 22 GiB per core, as the planner takes the fewest cores); compile 1–40 min uniform; then load,
// generate and verify for 60 s + 4 s per weights GiB + up to 60 s. Host share, held from start
// to finish (the HostBudget model): neuronx-cc workers, 2 CPUs per core up to 16, and 8 GiB +
// 0.5 × weights. Half the tests also compute the CPU reference (their model's first stack):
// 30 s + 10 s per weights GiB on 4 CPUs with 2 × weights (float32) of memory.
//
// Scenarios, as canrun campaign runs a trial (two stages: the CPU reference is host work of its
// own, 0 cores, added when the device stage ends, so the cores are free meanwhile): "exact" (the
// scheduler knows each duration), "estimated" (expected time off by a log-normal factor, sigma
// 0.3, as a history or a time model is), "host-heavy" (twice the compile CPUs, so the host, not
// the cores, bounds the campaign). "one-piece" is "exact" with the reference inside the test,
// holding its cores and its host share throughout (a trial run start to verdict in one slot);
// its makespan is compared with "exact"'s. "reference-first" is "exact" with the CPU reference
// run before the device stage instead of after it (a trial's device job becomes ready when its
// reference ends, so run.py can be given the reference's tokens); its makespan too is compared
// with "exact"'s.
//
// usage: bench_campaign_packing [TESTS] [SEEDS]
#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "campaign/core_allocator.h"
#include "campaign/host_budget.h"
#include "campaign/scheduler.h"

namespace {

using canrun::campaign::CoreAllocator;
using canrun::campaign::HostBudget;
using canrun::campaign::Job;
using canrun::campaign::Scheduler;

constexpr int kCores = 64;
constexpr double kHostCpus = 192;
constexpr double kHostMemoryGib = 2048;

struct SimulatedTest {
  Job job;  //!< what the scheduler is told
  double actual_s = 0;
  bool vision = false;
  std::optional<Job> verify;  //!< two stages: the CPU reference as host work after the device
  double verify_actual_s = 0;
};

struct Scenario {
  const char* name;
  double estimate_sigma;  //!< log-normal error of expected_s
  double compile_cpus_per_core;
  bool two_stage = true;
  //! The CPU reference before the device stage (its tokens go to run.py for the teacher-forced
  //! agreement): the device job is added when the reference ends, not the reference when the
  //! device job ends.
  bool reference_first = false;
};

std::vector<SimulatedTest> make_tests(int count, unsigned seed, const Scenario& scenario) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<SimulatedTest> tests;
  for (int idx = 0; idx < count; ++idx) {
    SimulatedTest test;
    test.vision = unit(random) < 0.3;
    const double pick = unit(random);
    const int cores = pick < 0.60 ? 1 : pick < 0.80 ? 2 : pick < 0.90 ? 4 : pick < 0.97 ? 8 : 16;
    const double low_gib = cores == 1 ? 0.25 : 11.0 * cores, high_gib = 22.0 * cores;
    const double weights_gib = low_gib * std::pow(high_gib / low_gib, unit(random));
    const double compile_s = 60 + unit(random) * (40 - 1) * 60;
    const double run_s = 60 + 4 * weights_gib + 60 * unit(random);
    const bool reference = unit(random) < 0.5;
    const double reference_s = 30 + 10 * weights_gib;
    const double error = std::exp(scenario.estimate_sigma * normal(random));
    test.job.id = fmt::format("{}/model-{}", test.vision ? "vlm" : "llm", idx);
    test.job.cores = cores;
    test.job.host_cpus = std::min(16.0, scenario.compile_cpus_per_core * cores);
    test.job.host_memory_gib = 8 + 0.5 * weights_gib;
    test.actual_s = compile_s + run_s;
    if (reference && scenario.two_stage) {
      test.verify = Job{test.job.id + "/verify", 0, 4.0, 2 + 2 * weights_gib, reference_s * error};
      test.verify_actual_s = reference_s;
    } else if (reference) {  // inside the test, after its run, holding its cores
      test.actual_s += reference_s;
      test.job.host_cpus += 4.0;
      test.job.host_memory_gib += 2 * weights_gib;
    }
    test.job.expected_s = test.actual_s * error;
    tests.push_back(std::move(test));
  }
  return tests;
}

double cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

struct Outcome {
  double makespan_s = 0;
  double device_bound_s = 0, host_cpu_bound_s = 0, host_memory_bound_s = 0, longest_s = 0;
  double scheduler_cpu_s = 0;
  double bound() const {
    return std::max({device_bound_s, host_cpu_bound_s, host_memory_bound_s, longest_s});
  }
};

//! Runs the tests through a fresh Scheduler; exits on any broken rule (overlap, lost test).
Outcome simulate(const std::vector<SimulatedTest>& tests, bool reference_first) {
  const canrun::backend::Topology trn2{4, 16, 24.0, 2.0, {1, 2, 4, 8, 16}, 16};
  auto cores = CoreAllocator::create(trn2, "range", static_cast<int>(kHostCpus));
  auto host = HostBudget::create({kHostCpus, kHostMemoryGib});
  if (!cores.ok() || !host.ok()) std::exit(1);
  Scheduler scheduler(std::move(cores).value(), std::move(host).value());

  Outcome outcome;
  std::map<std::string, const SimulatedTest*> by_id;
  double started_cpu = cpu_seconds();
  for (const auto& test : tests) {
    const bool first = reference_first && test.verify;
    if (!scheduler.add(first ? *test.verify : test.job).ok()) std::exit(1);
  }
  outcome.scheduler_cpu_s += cpu_seconds() - started_cpu;
  std::map<std::string, double> actual_s;  // every job's duration, host work included
  std::size_t jobs = 0;
  for (const auto& test : tests) {
    by_id[test.job.id] = &test;
    if (test.verify) by_id[test.verify->id] = &test;
    actual_s[test.job.id] = test.actual_s;
    ++jobs;
    outcome.device_bound_s += test.job.cores * test.actual_s / kCores;
    outcome.host_cpu_bound_s += test.job.host_cpus * test.actual_s / kHostCpus;
    outcome.host_memory_bound_s += test.job.host_memory_gib * test.actual_s / kHostMemoryGib;
    outcome.longest_s = std::max(outcome.longest_s, test.actual_s + test.verify_actual_s);
    if (test.verify) {
      actual_s[test.verify->id] = test.verify_actual_s;
      ++jobs;
      outcome.host_cpu_bound_s += test.verify->host_cpus * test.verify_actual_s / kHostCpus;
      outcome.host_memory_bound_s +=
          test.verify->host_memory_gib * test.verify_actual_s / kHostMemoryGib;
    }
  }

  std::vector<int> holder(kCores, -1);  // which start holds each core: checks the allocator
  std::multimap<double, std::pair<std::string, canrun::campaign::CoreGrant>> ends;
  std::size_t started = 0;
  double now = 0;
  while (!scheduler.idle()) {
    started_cpu = cpu_seconds();
    auto starts = scheduler.start_ready(now);
    outcome.scheduler_cpu_s += cpu_seconds() - started_cpu;
    for (auto& start : starts) {
      for (const auto& range : start.cores.ranges) {
        for (int core = range.first; core < range.first + range.count; ++core) {
          if (holder[core] >= 0) {
            std::cerr << "core " << core << " granted twice\n";
            std::exit(1);
          }
          holder[core] = static_cast<int>(started);
        }
      }
      ++started;
      ends.emplace(now + actual_s.at(start.id), std::pair{start.id, std::move(start.cores)});
    }
    if (ends.empty()) {
      std::cerr << "nothing runs and " << scheduler.pending() << " tests wait\n";
      std::exit(1);
    }
    now = ends.begin()->first;
    while (!ends.empty() && ends.begin()->first == now) {
      for (const auto& range : ends.begin()->second.second.ranges) {
        for (int core = range.first; core < range.first + range.count; ++core) holder[core] = -1;
      }
      started_cpu = cpu_seconds();
      const auto finished = scheduler.finish(ends.begin()->second.first);
      outcome.scheduler_cpu_s += cpu_seconds() - started_cpu;
      if (!finished.ok()) std::exit(1);
      // A device stage that ended hands its CPU reference to the host; with the reference
      // first, a reference that ended makes its device stage ready.
      const std::string& ended = ends.begin()->second.first;
      if (const auto test = by_id.find(ended); test != by_id.end() && test->second->verify) {
        const bool device_ended = ended == test->second->job.id;
        if (device_ended && !reference_first) {
          if (!scheduler.add(*test->second->verify).ok()) std::exit(1);
        } else if (!device_ended && reference_first) {
          if (!scheduler.add(test->second->job).ok()) std::exit(1);
        }
      }
      ends.erase(ends.begin());
    }
  }
  if (started != jobs) std::exit(1);
  outcome.makespan_s = now;
  return outcome;
}

}  // namespace

int main(int argc, char** argv) {
  const int count = argc > 1 ? std::stoi(argv[1]) : 600;
  const int seeds = argc > 2 ? std::stoi(argv[2]) : 20;
  const Scenario scenarios[] = {{"exact", 0.0, 2.0},
                                {"estimated", 0.3, 2.0},
                                {"host-heavy", 0.0, 4.0},
                                {"one-piece", 0.0, 2.0, false},
                                {"reference-first", 0.0, 2.0, true, true}};

  // The first seed's tests, described.
  const auto first = make_tests(count, 1, scenarios[0]);
  std::map<int, int> by_cores;
  int vision = 0;
  for (const auto& test : first) {
    ++by_cores[test.job.cores];
    vision += test.vision;
  }
  std::cout << fmt::format(
      "campaign packing on trn2.48xlarge ({} cores, {} host CPUs, {} GiB): {} tests x {} seeds; "
      "seed 1: {} text-generation, {} image-text-to-text; cores 1:{} 2:{} 4:{} 8:{} 16:{}\n",
      kCores, kHostCpus, kHostMemoryGib, count, seeds, count - vision, vision, by_cores[1],
      by_cores[2], by_cores[4], by_cores[8], by_cores[16]);

  std::string summary;
  std::vector<double> exact_makespans;  // per seed, to compare one-piece with
  double one_piece_loss = 0;
  double reference_first_loss = 0;
  for (const auto& scenario : scenarios) {
    double ratio_sum = 0, ratio_max = 0, cpu_s = 0;
    Outcome seed_one;
    for (int seed = 1; seed <= seeds; ++seed) {
      const auto outcome = simulate(make_tests(count, static_cast<unsigned>(seed), scenario),
                                    scenario.reference_first);
      const double ratio = outcome.makespan_s / outcome.bound();
      ratio_sum += ratio;
      ratio_max = std::max(ratio_max, ratio);
      cpu_s += outcome.scheduler_cpu_s;
      if (seed == 1) seed_one = outcome;
      if (std::string_view(scenario.name) == "exact") exact_makespans.push_back(outcome.makespan_s);
      if (!scenario.two_stage) one_piece_loss += outcome.makespan_s / exact_makespans[seed - 1];
      if (scenario.reference_first) {
        reference_first_loss += outcome.makespan_s / exact_makespans[seed - 1];
      }
    }
    summary +=
        fmt::format("{}{} {:.3f}", summary.empty() ? "" : ", ", scenario.name, ratio_sum / seeds);
    std::cout << fmt::format(
        "  {:<10} seed 1: makespan {:.0f} s, bound {:.0f} s (device {:.0f}, host CPU {:.0f}, "
        "host memory {:.0f}, longest {:.0f}); ratio over {} seeds: mean {:.3f}, worst {:.3f}; "
        "scheduler CPU {:.1f} us per test\n",
        scenario.name, seed_one.makespan_s, seed_one.bound(), seed_one.device_bound_s,
        seed_one.host_cpu_bound_s, seed_one.host_memory_bound_s, seed_one.longest_s, seeds,
        ratio_sum / seeds, ratio_max, cpu_s / (static_cast<double>(seeds) * count) * 1e6);
  }
  std::cout << "ratio makespan/lower-bound (mean over seeds, target <= 1.05): " << summary << '\n';
  std::cout << fmt::format(
      "one-piece makespan / exact (two-stage) makespan, mean over seeds: {:.3f}\n",
      one_piece_loss / seeds);
  std::cout << fmt::format(
      "reference-first makespan / exact (reference after the run) makespan, mean over seeds: "
      "{:.3f}\n",
      reference_first_loss / seeds);
  return 0;
}
