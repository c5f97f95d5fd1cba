// CoreAllocator: which cores of one machine each running test holds, so that a campaign packs
// tests onto the machine by their planned core count and the backend's pinning rules (SPEC.md
// §10). Cores are numbered 0..capacity()-1 as the backend numbers them.
//
// The rule comes from the profile's pinning syntax (backend/pinning.h):
//
//   range (neuron)  one contiguous range, aligned to its size. A test of k <= cores_per_device
//                   cores lies inside one device (on trn2, k = 1, 2, 4 inside one chip of 4,
//                   starting at a multiple of k); a larger one takes whole devices, starting
//                   on a multiple of k when such blocks tile the machine (8 and 16 on trn2).
//                   A size that does not divide a device (3 on trn2) may start anywhere inside
//                   one; one above a device but not a whole number of devices (6) starts on a
//                   device boundary. Nothing else is ever granted.
//   list (cuda)     any free set of cores, since the value is a list; an aligned range as for
//                   `range` when one is free, else the tightest contiguous run, else the lowest
//                   free ids (several ranges).
//   count (cpu)     the "cores" are worker processes, i.e. host CPUs: the capacity is the host
//                   CPU count given to create(), not the profile's nominal devices, and any free
//                   ids do (lowest first; the ids are bookkeeping, nothing is pinned).
//
// Among the aligned ranges that are free, the allocator takes the one whose enclosing aligned
// blocks (2k, 4k, ..., a device, two devices, ...) are the fullest, smallest block first: the
// buddy allocator's best fit. Small tests fill the devices already in use, so whole devices stay
// free for the 8- and 16-core tests.
//
// Thread safety: a value with no synchronisation; one owner mutates it (the Scheduler). Copies
// are independent (the scheduler simulates releases on a copy).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backend/pinning.h"
#include "backend/profile.h"
#include "core/result.h"

namespace canrun::campaign {

//! The cores one test is given: disjoint, increasing ranges. Exactly one range for `range`
//! pinning; for `list` and `count` one range whenever a contiguous set was free.
struct CoreGrant {
  std::vector<backend::CoreRange> ranges;

  //! Cores in all ranges.
  int count() const;
  bool contiguous() const { return ranges.size() == 1; }
  //! The first range: the whole grant when contiguous().
  backend::CoreRange range() const { return ranges.empty() ? backend::CoreRange{} : ranges[0]; }
  friend bool operator==(const CoreGrant& lhs, const CoreGrant& rhs);
};

//! The value of profile.pinning_env that gives a process `grant`: backend::pinning_value of its
//! one range, or for a `list` grant of several ranges their lists joined by ",". nullopt where
//! pinning_value gives none (count, no pinning).
std::optional<std::string> grant_pinning_value(const backend::BackendProfile& profile,
                                               const CoreGrant& grant);

//! "4-7", "0-1,4" (ranges written A-B, joined by ","), for messages and logs.
std::string describe_grant(const CoreGrant& grant);

class CoreAllocator {
 public:
  //! The machine's cores: topology.cores_per_device × topology.devices for `range` and `list`,
  //! `host_cpus` for `count` (ignored otherwise). kInvalidArgument, naming the value, for an
  //! unknown syntax, a topology without cores, or host_cpus < 1 with `count`.
  static Result<CoreAllocator> create(const backend::Topology& topology,
                                      std::string_view pinning_syntax, int host_cpus);
  //! The same from a profile; its name is put before an error's message.
  static Result<CoreAllocator> for_profile(const backend::BackendProfile& profile, int host_cpus);

  std::string_view syntax() const;
  int capacity() const { return static_cast<int>(held_.size()); }
  int free_cores() const { return free_; }
  bool is_free(int core) const;

  //! Whether a test of `count` cores can be placed on the empty machine (so it may ever run).
  bool placeable(int count) const;

  //! Where a test of `count` cores would go now (the rules above), or nullopt when no free set
  //! follows them. Cores of `keep_free` count as held (a reservation for a later test). Takes
  //! nothing.
  std::optional<CoreGrant> find(int count, const CoreGrant* keep_free = nullptr) const;

  //! Marks the grant's cores held. kInvalidArgument, naming the core, when one is out of range
  //! or already held; then nothing is taken.
  Status take(const CoreGrant& grant);
  //! Marks the grant's cores free again. kInvalidArgument, naming the core, when one is out of
  //! range or not held; then nothing is released.
  Status release(const CoreGrant& grant);

  //! find() then take(): the cores for a test of `count` cores, now held, or nullopt.
  std::optional<CoreGrant> allocate(int count);

 private:
  enum class Rule { kAlignedRange, kAnySet, kHostCount };
  CoreAllocator(Rule rule, int cores_per_device, int capacity);

  //! The start of the aligned range find() picks for `count` cores, given which cores count as
  //! held; nullopt when none is free.
  std::optional<int> best_aligned_start(int count, const std::vector<std::uint8_t>& held) const;
  //! Sets the grant's cores to `held` (1) or free (0); refuses, changing nothing, a core out of
  //! range or already in that state.
  Status mark(const CoreGrant& grant, std::uint8_t held);

  Rule rule_;
  int cores_per_device_;
  int free_;
  std::vector<std::uint8_t> held_;  //!< 1 where a test holds the core
};

}  // namespace canrun::campaign
