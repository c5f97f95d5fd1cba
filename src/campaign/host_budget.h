// HostBudget: the host's CPUs and memory, shared by the tests a campaign runs at once (SPEC.md
// §10: "host work (compilation, CPU references) is scheduled against the host's CPUs and
// memory").
//
// The model, kept simple on purpose: each test declares one HostResources share, the most it
// needs of the host at any moment (neuronx-cc's workers and memory while it compiles, the CPU
// reference while it runs), and holds that share from its start to its finish. A test starts
// only when its share fits beside the shares of the tests running: no oversubscription of
// CPUs, no memory the host does not have. Shares are kept in whole milli-CPUs and MiB (rounded
// up; the capacity rounded down), so that taking and giving back never drifts.
//
// Thread safety: host_resources() may be called from any thread. HostBudget is a value with no
// synchronisation; one owner mutates it (the Scheduler). Copies are independent.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/result.h"

namespace canrun::campaign {

//! CPUs and memory of a host, or a test's share of them.
struct HostResources {
  double cpus = 0;        //!< CPUs (fractions allowed)
  double memory_gib = 0;  //!< GiB of memory
};

//! This machine: the CPUs this process may run on (sched_getaffinity, as `nproc` counts;
//! sysconf(_SC_NPROCESSORS_ONLN) where that fails) and MemTotal of /proc/meminfo. kIoError
//! when /proc/meminfo cannot be read, kCorrupt when it has no MemTotal line.
Result<HostResources> host_resources();

//! MemTotal of /proc/meminfo text ("MemTotal:  2113683244 kB") in GiB. kCorrupt, quoting the
//! line, when it is missing or not a number of kB.
Result<double> meminfo_total_gib(std::string_view meminfo);

class HostBudget {
 public:
  //! kInvalidArgument, naming the value, unless both are finite and > 0.
  static Result<HostBudget> create(HostResources capacity);

  HostResources capacity() const;
  HostResources available() const;

  //! Whether `share` fits what is available now.
  bool fits(HostResources share) const;
  //! Whether `share` fits the whole host (so a test with it may ever run).
  bool fits_capacity(HostResources share) const;

  //! Holds `share`. kInvalidArgument (naming what is short) when it does not fit; then nothing
  //! is taken.
  Status take(HostResources share);
  //! Gives back a share taken before. kInvalidArgument when more is given back than is held;
  //! then nothing changes.
  Status give_back(HostResources share);

 private:
  struct Units {
    std::int64_t milli_cpus = 0;
    std::int64_t memory_mib = 0;
  };
  HostBudget(Units capacity) : capacity_(capacity), available_(capacity) {}
  static Units units_of(HostResources share);  //!< rounded up; negative or NaN as 0

  Units capacity_;
  Units available_;
};

}  // namespace canrun::campaign
