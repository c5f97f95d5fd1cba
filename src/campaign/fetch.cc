#include "campaign/fetch.h"

#include <fmt/format.h>

#include "core/log.h"

namespace canrun::campaign {

Result<std::pair<ReadyCheckpoint, FetchTicket>> fetch_checkpoint(
    hub::HubClient& client, const hub::HfCache& cache, DiskBudget& budget, const ModelId& model,
    const Revision& revision, const hub::CheckpointDownloadOptions& options) {
  CANRUN_ASSIGN_OR_RETURN(const hub::CheckpointManifest manifest,
                          hub::fetch_checkpoint_manifest(client, model, revision));
  CANRUN_ASSIGN_OR_RETURN(FetchTicket ticket,
                          budget.acquire(CheckpointNeed::from_manifest(manifest), options.stop));
  auto downloaded = hub::download_checkpoint(client, cache, manifest, options);
  if (!downloaded.ok()) {
    budget.release(ticket);
    return downloaded.error();
  }
  ReadyCheckpoint ready{model, manifest.commit, downloaded->snapshot, manifest.total_bytes(),
                        std::move(downloaded).value()};
  return std::make_pair(std::move(ready), std::move(ticket));
}

CheckpointPrefetcher::CheckpointPrefetcher(std::unique_ptr<hub::HubClient> client,
                                           hub::HfCache cache, DiskBudget& budget, Options options)
    : client_(std::move(client)),
      cache_(std::move(cache)),
      budget_(budget),
      options_(std::move(options)),
      worker_([this](std::stop_token stop) { run(stop); }) {}

CheckpointPrefetcher::~CheckpointPrefetcher() {
  worker_.request_stop();
  if (worker_.joinable()) worker_.join();
  for (auto& [handle, item] : items_) {
    if (item.ticket) budget_.release(*item.ticket);
  }
}

FetchHandle CheckpointPrefetcher::enqueue(ModelId model, Revision revision) {
  std::lock_guard lock(mutex_);
  const FetchHandle handle = next_handle_++;
  items_.emplace(handle,
                 Item{std::move(model), std::move(revision), false, std::nullopt, std::nullopt});
  queue_.push_back(handle);
  changed_.notify_all();
  return handle;
}

Result<ReadyCheckpoint> CheckpointPrefetcher::wait(FetchHandle handle) {
  std::unique_lock lock(mutex_);
  auto found = items_.find(handle);
  if (found == items_.end() || found->second.done) {
    return not_found(fmt::format("no checkpoint fetch {} is pending (done already?)", handle));
  }
  const std::stop_token stop = worker_.get_stop_token();
  changed_.wait(lock, stop, [&] {
    found = items_.find(handle);
    return found == items_.end() || found->second.outcome.has_value();
  });
  if (found == items_.end() || !found->second.outcome) {
    return Error(ErrorCode::kUnavailable, "the checkpoint prefetcher stopped");
  }
  return *found->second.outcome;
}

std::optional<Result<ReadyCheckpoint>> CheckpointPrefetcher::poll(FetchHandle handle) {
  std::lock_guard lock(mutex_);
  const auto found = items_.find(handle);
  if (found == items_.end() || found->second.done) {
    return Result<ReadyCheckpoint>(
        not_found(fmt::format("no checkpoint fetch {} is pending (done already?)", handle)));
  }
  return found->second.outcome;
}

void CheckpointPrefetcher::done(FetchHandle handle) {
  std::lock_guard lock(mutex_);
  const auto found = items_.find(handle);
  if (found == items_.end()) return;
  Item& item = found->second;
  if (item.outcome) {
    if (item.ticket) budget_.release(*item.ticket);
    items_.erase(found);
  } else {
    item.done = true;  // queued (skipped when its turn comes) or being fetched (released then)
  }
  changed_.notify_all();
}

void CheckpointPrefetcher::run(std::stop_token stop) {
  while (true) {
    FetchHandle handle = 0;
    std::optional<ModelId> model;
    std::optional<Revision> revision;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, stop, [&] { return !queue_.empty(); });
      if (stop.stop_requested()) return;
      handle = queue_.front();
      queue_.pop_front();
      const auto found = items_.find(handle);
      if (found == items_.end()) continue;
      if (found->second.done) {
        items_.erase(found);  // done before its turn: never fetched
        continue;
      }
      model = found->second.model;
      revision = found->second.revision;
    }
    hub::CheckpointDownloadOptions download;
    download.max_resumes = options_.max_resumes;
    download.stop = stop;
    if (options_.progress) {
      download.progress = [&](const hub::DownloadProgress& progress) {
        options_.progress(*model, progress);
      };
    }
    auto fetched = fetch_checkpoint(*client_, cache_, budget_, *model, *revision, download);
    if (!fetched.ok()) {
      log::debug("{}: the checkpoint was not fetched: {}", model->str(), fetched.error().message());
    }
    std::lock_guard lock(mutex_);
    const auto found = items_.find(handle);
    if (found == items_.end() || found->second.done) {
      if (fetched.ok()) budget_.release(fetched->second);
      if (found != items_.end()) items_.erase(found);
    } else if (fetched.ok()) {
      found->second.ticket = fetched->second;
      found->second.outcome = std::move(fetched->first);
    } else {
      found->second.outcome = fetched.error();
    }
    changed_.notify_all();
    if (stop.stop_requested()) return;
  }
}

}  // namespace canrun::campaign
