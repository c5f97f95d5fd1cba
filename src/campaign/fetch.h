// CheckpointPrefetcher: fetches the checkpoints a campaign will test into the HF cache, in the
// order it will test them, on a thread of its own and within a DiskBudget, so that downloads
// overlap the runs and the tests themselves load offline (HF_HUB_OFFLINE=1).
//
// The campaign loop:
//
//   auto budget = DiskBudget::open(cache, {.budget_bytes = gib << 30, .ledger = dir / "fetched"});
//   CheckpointPrefetcher prefetcher(std::move(client), cache, **budget);
//   for (const auto& trial : schedule) trial.fetch = prefetcher.enqueue(trial.model, trial.rev);
//   for (const auto& trial : schedule) {              // in enqueue order
//     auto ready = prefetcher.wait(trial.fetch);      // blocks until it is in the cache
//     if (ready) run trial offline at ready->commit;  // else record ready.error()
//     prefetcher.done(trial.fetch);                   // always: its room may be reused
//   }
//
// A checkpoint that does not fit waits for room, and room comes only from done(): wait() for
// handles in the order they were enqueued (several tests may run at once), and call done() for
// every handle, fetched or failed, or the prefetcher can wait forever on a checkpoint that an
// earlier, never-done handle holds room for. A checkpoint enqueued twice (two stacks) comes
// over the network once: the second handle holds the same blobs, and only its links are made.
//
// Thread safety: every public method may be called from any thread. The HubClient given is used
// by the prefetcher's thread only.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>

#include "campaign/disk_budget.h"
#include "core/model_id.h"
#include "core/result.h"
#include "hub/checkpoint_download.h"
#include "hub/hf_cache.h"
#include "hub/hub_client.h"

namespace canrun::campaign {

//! A checkpoint in the HF cache, ready for its test.
struct ReadyCheckpoint {
  ModelId model;
  std::string commit;                  //!< what the test loads (revision=commit)
  std::filesystem::path snapshot;      //!< snapshots/<commit>
  std::uint64_t bytes = 0;             //!< the checkpoint's size in the cache
  hub::DownloadedCheckpoint download;  //!< what fetching it did
};

//! One enqueued checkpoint.
using FetchHandle = std::uint64_t;

//! Fetches one checkpoint within the budget: manifest, room, download. On success the ticket
//! is held (release it after the test); on failure nothing is held.
Result<std::pair<ReadyCheckpoint, FetchTicket>> fetch_checkpoint(
    hub::HubClient& client, const hub::HfCache& cache, DiskBudget& budget, const ModelId& model,
    const Revision& revision, const hub::CheckpointDownloadOptions& options = {});

class CheckpointPrefetcher {
 public:
  struct Options {
    //! Download progress of one model, on the prefetcher's thread; may be empty.
    std::function<void(const ModelId&, const hub::DownloadProgress&)> progress;
    int max_resumes = 5;  //!< per file, see CheckpointDownloadOptions
  };

  CheckpointPrefetcher(std::unique_ptr<hub::HubClient> client, hub::HfCache cache,
                       DiskBudget& budget, Options options);
  CheckpointPrefetcher(std::unique_ptr<hub::HubClient> client, hub::HfCache cache,
                       DiskBudget& budget)
      : CheckpointPrefetcher(std::move(client), std::move(cache), budget, Options{}) {}
  //! Stops: a wait for room ends, a download stops at its next bytes (its partial file kept
  //! for the next campaign to continue), tickets still held are released; then joins.
  ~CheckpointPrefetcher();
  CheckpointPrefetcher(const CheckpointPrefetcher&) = delete;
  CheckpointPrefetcher& operator=(const CheckpointPrefetcher&) = delete;

  //! Queues a checkpoint; they are fetched one at a time, in this order.
  FetchHandle enqueue(ModelId model, Revision revision);
  //! Blocks until the checkpoint is in the cache, or its fetch failed (the error keeps its
  //! reason: kGated, kNotFound, kOverDiskBudget...). An unknown or done handle is kNotFound.
  Result<ReadyCheckpoint> wait(FetchHandle handle);
  //! The outcome when the checkpoint is fetched or its fetch failed; nullopt while it is
  //! queued or downloading (never blocks). An unknown or done handle is kNotFound.
  std::optional<Result<ReadyCheckpoint>> poll(FetchHandle handle);
  //! Its test is over (or will not run): its room may be reused. Before it is fetched, it is
  //! taken off the queue.
  void done(FetchHandle handle);

 private:
  struct Item {
    ModelId model;
    Revision revision;
    bool done = false;                               // done() came before the outcome
    std::optional<Result<ReadyCheckpoint>> outcome;  // set once fetched or failed
    std::optional<FetchTicket> ticket;               // held while fetched and not done
  };

  void run(std::stop_token stop);

  std::unique_ptr<hub::HubClient> client_;
  hub::HfCache cache_;
  DiskBudget& budget_;
  Options options_;
  std::mutex mutex_;
  std::condition_variable_any changed_;
  std::map<FetchHandle, Item> items_;
  std::deque<FetchHandle> queue_;
  FetchHandle next_handle_ = 1;
  std::jthread worker_;  // last: started after, and joined before, the members it uses
};

}  // namespace canrun::campaign
