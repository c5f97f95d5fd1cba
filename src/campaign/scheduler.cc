#include "campaign/scheduler.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/text.h"

namespace canrun::campaign {

Scheduler::Scheduler(CoreAllocator cores, HostBudget host)
    : cores_(std::move(cores)), host_(host) {}

namespace {

//! The cores for `count`: none at all for host work (0 cores), else the allocator's choice.
std::optional<CoreGrant> find_cores(const CoreAllocator& cores, int count,
                                    const CoreGrant* keep_free = nullptr) {
  if (count == 0) return CoreGrant{};
  return cores.find(count, keep_free);
}

}  // namespace

HostResources Scheduler::share_of(const Job& job) const {
  const double workers = cores_.syntax() == "count" ? job.cores : 0;
  return {job.host_cpus + workers, job.host_memory_gib};
}

Status Scheduler::add(Job job) {
  if (job.id.empty()) return invalid_argument("a test to schedule needs an id");
  const auto named = quote_for_message(job.id);
  const bool known = running_.contains(job.id) ||
                     std::any_of(pending_.begin(), pending_.end(),
                                 [&](const Queued& queued) { return queued.job.id == job.id; });
  if (known) return invalid_argument(fmt::format("test {} is already scheduled", named));
  for (const auto& [name, value] :
       {std::pair{"host_cpus", job.host_cpus}, std::pair{"host_memory_gib", job.host_memory_gib},
        std::pair{"expected_s", job.expected_s}}) {
    if (!std::isfinite(value) || value < 0) {
      return invalid_argument(
          fmt::format("test {}: {} = {} is not a number >= 0", named, name, value));
    }
  }
  if (job.cores == 0 && job.host_cpus <= 0) {
    return invalid_argument(
        fmt::format("test {} needs no cores and no host CPUs: it is no work", named));
  }
  if (job.cores < 0 || (job.cores > 0 && !cores_.placeable(job.cores))) {
    return invalid_argument(fmt::format("test {} needs {} cores; this machine has {} ({} pinning)",
                                        named, job.cores, cores_.capacity(), cores_.syntax()));
  }
  const auto share = share_of(job);
  if (!host_.fits_capacity(share)) {
    return invalid_argument(fmt::format(
        "test {} needs {} host CPUs and {} GiB of host memory; the host has {} and {:.1f} GiB",
        named, share.cpus, share.memory_gib, host_.capacity().cpus, host_.capacity().memory_gib));
  }
  // The finishing tests first, in the order of add(); then the others, each after every test
  // expected to take as long or longer (ties keep the order of add()).
  const auto others = std::find_if(pending_.begin(), pending_.end(),
                                   [](const Queued& queued) { return !queued.job.finishing; });
  const auto at = job.finishing ? others
                                : std::upper_bound(others, pending_.end(), job.expected_s,
                                                   [](double expected_s, const Queued& queued) {
                                                     return expected_s > queued.job.expected_s;
                                                   });
  pending_.insert(at, Queued{std::move(job), next_sequence_++});
  return ok_status();
}

std::optional<Scheduler::Reservation> Scheduler::reserve(const Job& head, double now_s) const {
  // Release the running tests in the order they are expected to end (an overdue one: now)
  // until the head fits.
  std::vector<std::pair<double, const Running*>> ends;
  ends.reserve(running_.size());
  for (const auto& [id, running] : running_) {
    ends.emplace_back(std::max(running.expected_end_s, now_s), &running);
  }
  std::sort(ends.begin(), ends.end(),
            [](const auto& lhs, const auto& rhs) { return lhs.first < rhs.first; });
  CoreAllocator cores = cores_;
  HostBudget host = host_;
  const auto share = share_of(head);
  for (std::size_t idx = 0; idx < ends.size();) {
    const double at_s = ends[idx].first;
    for (; idx < ends.size() && ends[idx].first == at_s; ++idx) {
      if (!cores.release(ends[idx].second->cores).ok() ||
          !host.give_back(ends[idx].second->share).ok()) {
        return std::nullopt;  // the books disagree with the running tests: a bug
      }
    }
    if (!host.fits(share)) continue;
    if (auto grant = find_cores(cores, head.cores)) {
      if (!host.take(share).ok()) return std::nullopt;
      return Reservation{at_s, std::move(*grant), host};
    }
  }
  return std::nullopt;
}

bool Scheduler::start(const Job& job, CoreGrant grant, HostResources share, double now_s,
                      std::vector<JobStart>& started) {
  // find() chose the grant and fits() checked the share: neither can be refused here.
  if (!cores_.take(grant).ok()) return false;
  if (!host_.take(share).ok()) {
    (void)cores_.release(grant);
    return false;
  }
  running_.emplace(job.id, Running{grant, share, now_s + job.expected_s});
  started.push_back(JobStart{job.id, std::move(grant)});
  return true;
}

std::vector<JobStart> Scheduler::start_ready(double now_s) {
  std::vector<JobStart> started;
  std::optional<Reservation> reservation;
  // Core counts that found no place in this call (anywhere; off the reservation). Starting a
  // test only takes cores, so a count that found none finds none until the call ends.
  const auto slots = static_cast<std::size_t>(cores_.capacity()) + 1;
  std::vector<std::uint8_t> no_room(slots, 0), no_room_off_reservation(slots, 0);
  std::vector<std::uint8_t> is_started(pending_.size(), 0);

  // Host work (0 cores) may start while every core is held; device tests may not.
  for (std::size_t idx = 0; idx < pending_.size(); ++idx) {
    const Job& job = pending_[idx].job;
    const auto share = share_of(job);
    const auto cores = static_cast<std::size_t>(job.cores);
    if (!reservation) {
      if (host_.fits(share) && !no_room[cores]) {
        if (auto grant = find_cores(cores_, job.cores)) {
          is_started[idx] = start(job, std::move(*grant), share, now_s, started);
          continue;
        }
        no_room[cores] = 1;
      }
      // The head: nothing after it may delay it.
      reservation = reserve(job, now_s);
      if (!reservation) break;
      continue;
    }
    // Back-fill behind the head's reservation.
    if (!host_.fits(share)) continue;
    std::optional<CoreGrant> grant;
    const bool ends_in_time = now_s + job.expected_s <= reservation->at_s;
    if (ends_in_time) {
      if (no_room[cores] || !(grant = find_cores(cores_, job.cores))) {
        no_room[cores] = 1;
        continue;
      }
    } else {
      if (!reservation->spare.fits(share)) continue;
      if (no_room_off_reservation[cores] ||
          !(grant = find_cores(cores_, job.cores, &reservation->cores))) {
        no_room_off_reservation[cores] = 1;
        continue;
      }
      if (!reservation->spare.take(share).ok()) continue;
    }
    is_started[idx] = start(job, std::move(*grant), share, now_s, started);
  }

  if (!started.empty()) {
    std::size_t kept = 0;
    for (std::size_t idx = 0; idx < pending_.size(); ++idx) {
      if (is_started[idx]) continue;
      if (kept != idx) pending_[kept] = std::move(pending_[idx]);
      ++kept;
    }
    pending_.resize(kept);
  }
  return started;
}

Status Scheduler::finish(std::string_view id) {
  const auto found = running_.find(std::string(id));
  if (found == running_.end()) {
    return not_found(fmt::format("test {} is not running", quote_for_message(id)));
  }
  CANRUN_RETURN_IF_ERROR(cores_.release(found->second.cores));
  CANRUN_RETURN_IF_ERROR(host_.give_back(found->second.share));
  running_.erase(found);
  return ok_status();
}

}  // namespace canrun::campaign
