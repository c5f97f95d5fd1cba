// The checkpoints a campaign fetches ahead of their runs: those of its planned items that the
// HF cache lacks, fetched one at a time in the order the scheduler prefers by the campaign's
// CheckpointPrefetcher (fetch.h), within the slice's DiskBudget (disk_budget.h), while the
// items already here run. Items are named by their index in the work list.
//
// Thread safety: in_hf_cache may be called from any thread. A FetchAhead is used from one
// thread (the campaign's loop); the prefetcher it owns runs a thread of its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "campaign/campaign_dir.h"
#include "campaign/disk_budget.h"
#include "campaign/fetch.h"
#include "campaign/work.h"
#include "core/result.h"
#include "hub/hf_cache.h"

namespace canrun::campaign {

//! Whether the HF cache holds the item's checkpoint at its planned commit: its config
//! (config.json, or a pipeline's model_index.json) and every safetensors header the hub reader
//! needs (each shard an index names, each pipeline component's weights), not just what planning
//! fetched.
bool in_hf_cache(const WorkItem& item, const hub::HfCache& cache);

class FetchAhead {
 public:
  //! Fetches into the HF cache of the environment, from the Hub of the environment, within
  //! `budget` bytes (0: no limit); the slice's ledger of what it fetched is its own (each node
  //! of a fleet has its own HF cache).
  static Result<std::unique_ptr<FetchAhead>> open(const CampaignDir& dir, int slice,
                                                  std::uint64_t budget);
  ~FetchAhead() { prefetcher_.reset(); }  // stops its thread before the budget goes

  //! Queues item `index`'s checkpoint, after those queued before; an item whose id or
  //! revision does not parse is an error, never queued.
  Status enqueue(std::size_t index, const WorkItem& item);
  //! Items whose fetch ended since the last call, with its outcome (never blocks).
  std::vector<std::pair<std::size_t, Status>> ready();
  //! The item's test is over (or will not run): its room may be reused.
  void done(std::size_t index);
  //! Items queued whose fetch has not ended.
  std::size_t waiting() const { return waiting_.size(); }
  //! The most the campaign's downloads held at once.
  std::uint64_t peak_bytes() const { return budget_->peak_bytes_held(); }

 private:
  FetchAhead() = default;
  std::unique_ptr<DiskBudget> budget_;
  std::unique_ptr<CheckpointPrefetcher> prefetcher_;
  std::map<std::size_t, FetchHandle> handles_;
  std::vector<std::size_t> waiting_;
};

}  // namespace canrun::campaign
