#include "campaign/host_budget.h"

#include <fmt/format.h>
#include <sched.h>
#include <unistd.h>

#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include "core/text.h"

namespace canrun::campaign {
namespace {

constexpr double kMibPerGib = 1024.0;
// Far above any host, far below what int64 holds: a share past it counts as this much.
constexpr double kMaxUnits = 1e15;

std::int64_t round_up(double value) {
  if (!(value > 0)) return 0;  // also NaN
  return static_cast<std::int64_t>(std::ceil(std::min(value, kMaxUnits) - 1e-9));
}

std::int64_t round_down(double value) {
  if (!(value > 0)) return 0;
  return static_cast<std::int64_t>(std::floor(std::min(value, kMaxUnits) + 1e-9));
}

}  // namespace

Result<double> meminfo_total_gib(std::string_view meminfo) {
  constexpr std::string_view kKey = "MemTotal:";
  std::size_t at = 0;
  while (at < meminfo.size()) {
    const auto end = std::min(meminfo.find('\n', at), meminfo.size());
    std::string_view line = meminfo.substr(at, end - at);
    at = end + 1;
    if (!line.starts_with(kKey)) continue;
    std::string_view rest = line.substr(kKey.size());
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    std::uint64_t kib = 0;
    const auto [number_end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), kib);
    std::string_view unit(number_end,
                          static_cast<std::size_t>(rest.data() + rest.size() - number_end));
    while (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
    while (!unit.empty() && (unit.back() == ' ' || unit.back() == '\r')) unit.remove_suffix(1);
    if (error != std::errc() || number_end == rest.data() || unit != "kB" || kib == 0) {
      return corrupt(
          fmt::format("/proc/meminfo line {} is not a memory size in kB", quote_for_message(line)));
    }
    return static_cast<double>(kib) / (1024.0 * 1024.0);
  }
  return corrupt("/proc/meminfo has no MemTotal line");
}

Result<HostResources> host_resources() {
  HostResources host;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    host.cpus = CPU_COUNT(&set);
  } else {
    host.cpus = static_cast<double>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  }
  std::ifstream file("/proc/meminfo");
  if (!file) return io_error("cannot read /proc/meminfo (the host's memory)");
  std::stringstream text;
  text << file.rdbuf();
  CANRUN_ASSIGN_OR_RETURN(host.memory_gib, meminfo_total_gib(text.str()));
  return host;
}

HostBudget::Units HostBudget::units_of(HostResources share) {
  return {round_up(share.cpus * 1000.0), round_up(share.memory_gib * kMibPerGib)};
}

Result<HostBudget> HostBudget::create(HostResources capacity) {
  if (!std::isfinite(capacity.cpus) || capacity.cpus <= 0 || capacity.cpus > kMaxUnits / 1000) {
    return invalid_argument(
        fmt::format("host CPU count {} is not a positive number", capacity.cpus));
  }
  if (!std::isfinite(capacity.memory_gib) || capacity.memory_gib <= 0 ||
      capacity.memory_gib > kMaxUnits / kMibPerGib) {
    return invalid_argument(
        fmt::format("host memory {} GiB is not a positive number", capacity.memory_gib));
  }
  return HostBudget(
      Units{round_down(capacity.cpus * 1000.0), round_down(capacity.memory_gib * kMibPerGib)});
}

HostResources HostBudget::capacity() const {
  return {static_cast<double>(capacity_.milli_cpus) / 1000.0,
          static_cast<double>(capacity_.memory_mib) / kMibPerGib};
}

HostResources HostBudget::available() const {
  return {static_cast<double>(available_.milli_cpus) / 1000.0,
          static_cast<double>(available_.memory_mib) / kMibPerGib};
}

bool HostBudget::fits(HostResources share) const {
  const Units need = units_of(share);
  return need.milli_cpus <= available_.milli_cpus && need.memory_mib <= available_.memory_mib;
}

bool HostBudget::fits_capacity(HostResources share) const {
  const Units need = units_of(share);
  return need.milli_cpus <= capacity_.milli_cpus && need.memory_mib <= capacity_.memory_mib;
}

Status HostBudget::take(HostResources share) {
  const Units need = units_of(share);
  if (need.milli_cpus > available_.milli_cpus) {
    return invalid_argument(fmt::format("host share of {} CPUs does not fit: {} of {} are free",
                                        share.cpus, available().cpus, capacity().cpus));
  }
  if (need.memory_mib > available_.memory_mib) {
    return invalid_argument(
        fmt::format("host share of {} GiB does not fit: {:.1f} of {:.1f} GiB are free",
                    share.memory_gib, available().memory_gib, capacity().memory_gib));
  }
  available_.milli_cpus -= need.milli_cpus;
  available_.memory_mib -= need.memory_mib;
  return ok_status();
}

Status HostBudget::give_back(HostResources share) {
  const Units back = units_of(share);
  if (available_.milli_cpus + back.milli_cpus > capacity_.milli_cpus ||
      available_.memory_mib + back.memory_mib > capacity_.memory_mib) {
    return invalid_argument(fmt::format(
        "host share of {} CPUs and {} GiB was not held: giving it back would exceed the host",
        share.cpus, share.memory_gib));
  }
  available_.milli_cpus += back.milli_cpus;
  available_.memory_mib += back.memory_mib;
  return ok_status();
}

}  // namespace canrun::campaign
