#include "campaign/fetch_ahead.h"

#include <algorithm>
#include <string>
#include <string_view>

#include "hub/checkpoint_files.h"
#include "hub/hub_client.h"

namespace canrun::campaign {

bool in_hf_cache(const WorkItem& item, const hub::HfCache& cache) {
  auto revision = Revision::parse(item.revision.empty() ? "main" : item.revision);
  if (!revision.ok()) return false;
  const auto snapshot = cache.snapshot_dir(item.model_id, *revision);
  if (!snapshot) return false;
  hub::LocalCheckpointFiles files(*snapshot, snapshot->string());
  const std::vector<std::string> listed = files.list();
  const auto has = [&](std::string_view name) {
    return std::find(listed.begin(), listed.end(), name) != listed.end();
  };
  if (!has("config.json") && !has(hub::kPipelineIndexFile)) return false;
  return hub::read_checkpoint_headers(files, listed).ok();
}

Result<std::unique_ptr<FetchAhead>> FetchAhead::open(const CampaignDir& dir, int slice,
                                                     std::uint64_t budget) {
  auto fetching = std::unique_ptr<FetchAhead>(new FetchAhead());
  const hub::HfCache cache = hub::HfCache::from_environment();
  DiskBudget::Options options;
  options.budget_bytes = budget > 0 ? budget : (std::uint64_t{1} << 62);
  options.ledger = dir.slice_dir(slice) / "fetched-blobs";
  CANRUN_ASSIGN_OR_RETURN(fetching->budget_, DiskBudget::open(cache, options));
  CANRUN_ASSIGN_OR_RETURN(hub::HubConfig config, hub::HubConfig::from_environment());
  fetching->prefetcher_ = std::make_unique<CheckpointPrefetcher>(
      std::make_unique<hub::HubClient>(std::move(config),
                                       hub::make_curl_transport(hub::default_transport_options())),
      cache, *fetching->budget_);
  return fetching;
}

Status FetchAhead::enqueue(std::size_t index, const WorkItem& item) {
  CANRUN_ASSIGN_OR_RETURN(Revision revision,
                          Revision::parse(item.revision.empty() ? "main" : item.revision));
  waiting_.push_back(index);
  handles_[index] = prefetcher_->enqueue(item.model_id, std::move(revision));
  return ok_status();
}

std::vector<std::pair<std::size_t, Status>> FetchAhead::ready() {
  std::vector<std::pair<std::size_t, Status>> out;
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    auto outcome = prefetcher_->poll(handles_.at(*it));
    if (!outcome) {
      ++it;
      continue;
    }
    out.emplace_back(*it, outcome->ok() ? ok_status() : Status(outcome->error()));
    it = waiting_.erase(it);
  }
  return out;
}

void FetchAhead::done(std::size_t index) {
  if (const auto found = handles_.find(index); found != handles_.end()) {
    prefetcher_->done(found->second);
    handles_.erase(found);
  }
}

}  // namespace canrun::campaign
