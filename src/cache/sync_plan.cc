#include "cache/sync_plan.h"

#include <algorithm>
#include <set>

namespace canrun::cache {
namespace {

//! `hf buckets sync` treats modification times within a second as equal.
constexpr std::int64_t kTimeWindowMs = 1000;

bool is_done_marker(std::string_view path) {
  return entry_of(path) != path && path.ends_with("/" + std::string(kDoneMarker));
}

//! Where a step goes in the plan: copies (markers last), deletes (markers first), skips.
int order_of(const SyncStep& step) {
  const bool marker = is_done_marker(step.path);
  switch (step.action) {
    case SyncAction::kCopy:
      return marker ? 1 : 0;
    case SyncAction::kDelete:
      return marker ? 2 : 3;
    case SyncAction::kSkip:
      return 4;
  }
  return 4;
}

}  // namespace

std::string_view sync_action_name(SyncAction action) {
  switch (action) {
    case SyncAction::kCopy:
      return "copy";
    case SyncAction::kDelete:
      return "delete";
    case SyncAction::kSkip:
      return "skip";
  }
  return "skip";
}

std::size_t SyncPlan::count(SyncAction action) const {
  return static_cast<std::size_t>(std::count_if(
      steps.begin(), steps.end(), [&](const SyncStep& step) { return step.action == action; }));
}

std::int64_t SyncPlan::bytes(SyncAction action) const {
  std::int64_t total = 0;
  for (const SyncStep& step : steps) total += step.action == action ? step.size : 0;
  return total;
}

std::vector<SyncStep> compare_files(const std::vector<CacheFile>& source,
                                    const std::vector<CacheFile>& destination, bool delete_extra) {
  std::vector<SyncStep> steps;
  auto src = source.begin();
  auto dst = destination.begin();
  while (src != source.end() || dst != destination.end()) {
    if (dst == destination.end() || (src != source.end() && src->path < dst->path)) {
      steps.push_back({SyncAction::kCopy, src->path, src->size, "new file"});
      ++src;
    } else if (src == source.end() || dst->path < src->path) {
      if (delete_extra)
        steps.push_back({SyncAction::kDelete, dst->path, dst->size, "not in source"});
      ++dst;
    } else {
      if (src->size != dst->size) {
        steps.push_back({SyncAction::kCopy, src->path, src->size, "size differs"});
      } else if (src->mtime_ms - dst->mtime_ms > kTimeWindowMs) {
        steps.push_back({SyncAction::kCopy, src->path, src->size, "source newer"});
      } else {
        steps.push_back({SyncAction::kSkip, src->path, src->size, "unchanged"});
      }
      ++src;
      ++dst;
    }
  }
  return steps;
}

SyncPlan plan_sync(std::vector<SyncStep> steps) {
  std::vector<std::string> source_paths;
  for (const SyncStep& step : steps) {
    if (step.action != SyncAction::kDelete) source_paths.push_back(step.path);
  }
  const auto states = entry_states(source_paths);
  SyncPlan plan;
  std::set<std::string> skipped;
  for (SyncStep& step : steps) {
    // A destination's write in progress stays: its writer renames it into place.
    if (step.action == SyncAction::kDelete && is_write_in_progress(step.path)) continue;
    const std::string entry = entry_of(step.path);
    const auto state = states.find(entry);
    const bool held_incomplete = state != states.end() && state->second != EntryState::kComplete;
    if (held_incomplete) {
      if (step.action != SyncAction::kDelete && skipped.insert(entry).second) {
        plan.skipped_entries.push_back({entry, state->second});
      }
      continue;
    }
    plan.steps.push_back(std::move(step));
  }
  std::stable_sort(
      plan.steps.begin(), plan.steps.end(),
      [](const SyncStep& lhs, const SyncStep& rhs) { return order_of(lhs) < order_of(rhs); });
  std::sort(plan.skipped_entries.begin(), plan.skipped_entries.end(),
            [](const SkippedEntry& lhs, const SkippedEntry& rhs) { return lhs.entry < rhs.entry; });
  return plan;
}

}  // namespace canrun::cache
