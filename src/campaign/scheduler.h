// Scheduler: which of a campaign's tests start now, and on which cores (SPEC.md §10). It packs
// tests onto one machine by their planned core count (CoreAllocator) within the host's CPUs and
// memory (HostBudget).
//
// Policy:
// - Pending tests are taken longest expected first (ties: the order they were added): the
//   longest-processing-time rule, so the campaign ends on short tests, not on a long one
//   started late. A test that finishes a trial under way (Job::finishing, its verification) is
//   taken before all of them: otherwise, on a `count` profile whose device runs hold every host
//   CPU, verifications would wait for the last run and no verdict would be recorded until then.
// - Every test that fits the free cores and the host budget, in that order, starts.
// - The first test in that order that does not fit (the head) gets a reservation, as in EASY
//   back-filling: from the expected ends of the running tests, the earliest time T at which its
//   cores and host share would be free, and the cores R it would get then. A later test may
//   still start now (back-fill) only if it is expected to end by T, or if it keeps off R and
//   its host share fits beside the head's at T. So back-filling never delays the head when the
//   estimates hold, and the head cannot starve: every test becomes the head in its turn. A test
//   running past its expected end counts as about to end: no back-fill may then use R, so an
//   overrun delays the head only by the overrun itself. Only the head is protected; a test
//   added later with a longer expected time becomes the head in its place.
// - On a `count` profile (cpu) a test's cores are host CPUs, so its host CPU share is its
//   cores plus the host_cpus it declares (what it runs beside its workers, e.g. the CPU
//   reference).
// Measured by bench/campaign_packing_bench.cc: ordering by core-seconds or by dominant resource
// share, back-filling with no reservation, or reserving the head's cores but not its host share
// all packed worse than this.
//
// Pure logic: no threads, no clock. The caller passes the time (seconds on any clock it keeps,
// a simulated one included) to start_ready() and calls finish() when a test's process is gone.
// After start_ready() with nothing running, a test has started if any is pending (add() refuses
// a test that could not run on the empty machine).
//
// Thread safety: none; one thread owns a Scheduler.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "campaign/core_allocator.h"
#include "campaign/host_budget.h"
#include "core/result.h"

namespace canrun::campaign {

//! One test to schedule.
struct Job {
  std::string id;              //!< unique among the scheduler's tests
  int cores = 1;               //!< planned core count; 0: host work only (a CPU reference)
  double host_cpus = 0;        //!< host CPUs it needs at most (compiling, CPU reference)
  double host_memory_gib = 0;  //!< host memory it needs at most
  double expected_s = 0;       //!< expected seconds from start to finish (expected_time.h)
  //! It finishes a trial already under way (its verification): taken before every test that
  //! does not, in the order added, so that verdicts are decided as their runs end and not
  //! after every run of the campaign.
  bool finishing = false;
};

//! A test to start now, on these cores.
struct JobStart {
  std::string id;
  CoreGrant cores;
};

class Scheduler {
 public:
  Scheduler(CoreAllocator cores, HostBudget host);

  //! Queues a test. kInvalidArgument, naming the test and the value, for an empty or duplicate
  //! id, cores the empty machine cannot place, a host share above the whole host, or a negative
  //! or non-finite number.
  Status add(Job job);

  //! The tests to start at `now_s`, their cores and host shares now held; they are running
  //! until finish(). `now_s` must not go back between calls.
  std::vector<JobStart> start_ready(double now_s);

  //! A running test is over: its cores and host share are free again. kNotFound for an id that
  //! is not running.
  Status finish(std::string_view id);

  std::size_t pending() const { return pending_.size(); }
  std::size_t running() const { return running_.size(); }
  //! Nothing pending and nothing running: the campaign is done.
  bool idle() const { return pending_.empty() && running_.empty(); }

  const CoreAllocator& cores() const { return cores_; }
  const HostBudget& host() const { return host_; }

 private:
  struct Queued {
    Job job;
    std::size_t sequence;  //!< order of add(), to break ties
  };
  struct Running {
    CoreGrant cores;
    HostResources share;
    double expected_end_s;
  };
  //! Where and when the head can start, and the host it leaves to others then.
  struct Reservation {
    double at_s;
    CoreGrant cores;
    HostBudget spare;
  };

  //! The host share a test holds (cores added on `count` profiles).
  HostResources share_of(const Job& job) const;
  std::optional<Reservation> reserve(const Job& head, double now_s) const;
  //! Takes the cores and share and records the test as running; false (nothing taken) only if
  //! the books disagree, which would be a bug.
  bool start(const Job& job, CoreGrant grant, HostResources share, double now_s,
             std::vector<JobStart>& started);

  CoreAllocator cores_;
  HostBudget host_;
  std::vector<Queued> pending_;  //!< longest expected first, then by sequence
  std::unordered_map<std::string, Running> running_;
  std::size_t next_sequence_ = 0;
};

}  // namespace canrun::campaign
