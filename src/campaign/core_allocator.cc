#include "campaign/core_allocator.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/text.h"

namespace canrun::campaign {
namespace {

//! Free runs of `held` as ranges, increasing.
std::vector<backend::CoreRange> free_runs(const std::vector<std::uint8_t>& held) {
  std::vector<backend::CoreRange> runs;
  const int capacity = static_cast<int>(held.size());
  for (int core = 0; core < capacity;) {
    if (held[core]) {
      ++core;
      continue;
    }
    const int first = core;
    while (core < capacity && !held[core]) ++core;
    runs.push_back({first, core - first});
  }
  return runs;
}

//! The lowest `count` free ids of `held`, as increasing ranges.
CoreGrant lowest_free(const std::vector<std::uint8_t>& held, int count) {
  CoreGrant grant;
  for (const auto run : free_runs(held)) {
    if (count == 0) break;
    const int take = std::min(count, run.count);
    grant.ranges.push_back({run.first, take});
    count -= take;
  }
  return grant;
}

}  // namespace

int CoreGrant::count() const {
  int total = 0;
  for (const auto& range : ranges) total += range.count;
  return total;
}

bool operator==(const CoreGrant& lhs, const CoreGrant& rhs) {
  return std::equal(lhs.ranges.begin(), lhs.ranges.end(), rhs.ranges.begin(), rhs.ranges.end(),
                    [](backend::CoreRange left, backend::CoreRange right) {
                      return left.first == right.first && left.count == right.count;
                    });
}

std::optional<std::string> grant_pinning_value(const backend::BackendProfile& profile,
                                               const CoreGrant& grant) {
  if (grant.ranges.empty()) return std::nullopt;
  if (grant.contiguous()) return backend::pinning_value(profile, grant.range());
  // Only a list can name cores that are not contiguous.
  if (profile.pinning_syntax != "list") return std::nullopt;
  std::string joined;
  for (const auto& range : grant.ranges) {
    const auto part = backend::pinning_value(profile, range);
    if (!part) return std::nullopt;
    joined += joined.empty() ? *part : "," + *part;
  }
  return joined;
}

std::string describe_grant(const CoreGrant& grant) {
  std::string text;
  for (const auto& range : grant.ranges) {
    if (!text.empty()) text += ',';
    text += range.count == 1 ? std::to_string(range.first)
                             : fmt::format("{}-{}", range.first, range.first + range.count - 1);
  }
  return text.empty() ? "(none)" : text;
}

CoreAllocator::CoreAllocator(Rule rule, int cores_per_device, int capacity)
    : rule_(rule),
      cores_per_device_(cores_per_device),
      free_(capacity),
      held_(static_cast<std::size_t>(capacity), 0) {}

Result<CoreAllocator> CoreAllocator::create(const backend::Topology& topology,
                                            std::string_view pinning_syntax, int host_cpus) {
  if (pinning_syntax == "count") {
    if (host_cpus < 1) {
      return invalid_argument(
          fmt::format("host CPU count {} leaves no worker for pinning syntax \"count\" (need >= 1)",
                      host_cpus));
    }
    return CoreAllocator(Rule::kHostCount, 1, host_cpus);
  }
  if (pinning_syntax != "range" && pinning_syntax != "list") {
    return invalid_argument(fmt::format(
        "pinning syntax {} is not range, list or count: a campaign cannot place tests by it",
        quote_for_message(pinning_syntax)));
  }
  if (topology.cores_per_device < 1 || topology.devices < 1 ||
      topology.cores_per_device > (1 << 16) / topology.devices) {
    return invalid_argument(
        fmt::format("topology of {} devices of {} cores is not a machine to pack (1 to 65536 "
                    "cores)",
                    topology.devices, topology.cores_per_device));
  }
  return CoreAllocator(pinning_syntax == "range" ? Rule::kAlignedRange : Rule::kAnySet,
                       topology.cores_per_device, topology.cores_per_device * topology.devices);
}

Result<CoreAllocator> CoreAllocator::for_profile(const backend::BackendProfile& profile,
                                                 int host_cpus) {
  auto allocator = create(profile.topology, profile.pinning_syntax, host_cpus);
  if (!allocator.ok()) return allocator.error().with_context("backend profile " + profile.name);
  return allocator;
}

std::string_view CoreAllocator::syntax() const {
  switch (rule_) {
    case Rule::kAlignedRange:
      return "range";
    case Rule::kAnySet:
      return "list";
    case Rule::kHostCount:
      return "count";
  }
  return "";
}

bool CoreAllocator::is_free(int core) const {
  return core >= 0 && core < capacity() && !held_[static_cast<std::size_t>(core)];
}

bool CoreAllocator::placeable(int count) const { return count >= 1 && count <= capacity(); }

std::optional<int> CoreAllocator::best_aligned_start(int count,
                                                     const std::vector<std::uint8_t>& held) const {
  const int capacity = this->capacity();
  const int per_device = cores_per_device_;
  const int devices = capacity / per_device;
  // The shape rule of the header: inside one device, or whole devices.
  const bool inside_device = count <= per_device;
  int align = 1;
  if (inside_device) {
    align = per_device % count == 0 ? count : 1;
  } else {
    const int whole = (count + per_device - 1) / per_device;
    align = count % per_device == 0 && devices % whole == 0 ? count : per_device;
  }
  // Enclosing blocks that tell candidates apart, smallest first: halves of a device, then
  // one, two, four... devices, each larger than the grant and smaller than the machine.
  std::vector<int> levels;
  for (int size = 2; size < per_device; size *= 2)
    if (size > count) levels.push_back(size);
  for (int size = per_device; size < capacity; size *= 2)
    if (size > count) levels.push_back(size);

  std::vector<int> held_before(held.size() + 1, 0);  // prefix sums of held cores
  for (std::size_t core = 0; core < held.size(); ++core)
    held_before[core + 1] = held_before[core] + held[core];
  const auto held_in = [&](int first, int end) { return held_before[end] - held_before[first]; };

  std::optional<int> best;
  for (int start = 0; start + count <= capacity; start += align) {
    if (inside_device && start / per_device != (start + count - 1) / per_device) continue;
    if (held_in(start, start + count) != 0) continue;
    if (!best) {
      best = start;
      continue;
    }
    for (const int size : levels) {
      const int mine = held_in(start / size * size, std::min(capacity, start / size * size + size));
      const int theirs =
          held_in(*best / size * size, std::min(capacity, *best / size * size + size));
      if (mine != theirs) {
        if (mine > theirs) best = start;
        break;
      }
    }
  }
  return best;
}

std::optional<CoreGrant> CoreAllocator::find(int count, const CoreGrant* keep_free) const {
  if (!placeable(count) || count > free_) return std::nullopt;
  std::vector<std::uint8_t> merged;
  const std::vector<std::uint8_t>* held = &held_;
  if (keep_free != nullptr && !keep_free->ranges.empty()) {
    merged = held_;
    int still_free = free_;
    for (const auto& range : keep_free->ranges) {
      for (int core = std::max(0, range.first); core < range.first + range.count; ++core) {
        if (core >= capacity()) break;
        auto& slot = merged[static_cast<std::size_t>(core)];
        still_free -= slot == 0;
        slot = 1;
      }
    }
    if (count > still_free) return std::nullopt;
    held = &merged;
  }
  if (rule_ == Rule::kHostCount) return lowest_free(*held, count);

  if (const auto start = best_aligned_start(count, *held)) {
    return CoreGrant{{backend::CoreRange{*start, count}}};
  }
  if (rule_ == Rule::kAlignedRange) return std::nullopt;

  // A list names any set: the tightest contiguous run that holds it, else the lowest ids.
  std::optional<backend::CoreRange> tightest;
  for (const auto run : free_runs(*held)) {
    if (run.count >= count && (!tightest || run.count < tightest->count)) tightest = run;
  }
  if (tightest) return CoreGrant{{backend::CoreRange{tightest->first, count}}};
  return lowest_free(*held, count);
}

Status CoreAllocator::take(const CoreGrant& grant) { return mark(grant, 1); }

Status CoreAllocator::release(const CoreGrant& grant) { return mark(grant, 0); }

Status CoreAllocator::mark(const CoreGrant& grant, std::uint8_t held) {
  // On a copy, so that a grant refused half-way (or naming a core twice) changes nothing.
  auto marked = held_;
  int changed = 0;
  for (const auto& range : grant.ranges) {
    for (int core = range.first; core < range.first + range.count; ++core) {
      if (core < 0 || core >= capacity() || marked[static_cast<std::size_t>(core)] == held) {
        return invalid_argument(fmt::format("cannot {} cores {}: core {} is {}",
                                            held ? "take" : "release", describe_grant(grant), core,
                                            core < 0 || core >= capacity() ? "not on this machine"
                                            : held                         ? "already held"
                                                                           : "not held"));
      }
      marked[static_cast<std::size_t>(core)] = held;
      ++changed;
    }
  }
  held_ = std::move(marked);
  free_ += held ? -changed : changed;
  return ok_status();
}

std::optional<CoreGrant> CoreAllocator::allocate(int count) {
  auto grant = find(count);
  if (grant && !take(*grant).ok()) return std::nullopt;
  return grant;
}

}  // namespace canrun::campaign
