// DiskBudget: the bytes a campaign's checkpoint downloads may hold in the HF cache at once
// (--disk-budget), and which of them to delete when it needs room.
//
// A campaign fetches checkpoints ahead of their tests. Before fetching one it acquire()s room
// for it: the bytes of its blobs that the cache lacks are reserved (the full size, before any
// byte arrives, so a download in progress can never overrun the budget). When there is not
// room, blobs of checkpoints whose tests are over (release()d) are evicted, least recently
// released first; when that is still not enough, acquire() waits for a release (try_acquire()
// answers at once instead). A checkpoint larger than the whole budget is refused at once
// (reason kOverDiskBudget).
//
// What is never deleted:
//   - a blob that was in the cache when the budget was opened (the user's), nor one that
//     appears later without the campaign fetching it (another process's download); these cost
//     the budget nothing;
//   - a blob an unreleased ticket needs: blobs are reference-counted, so two tests of one repo
//     (two stacks, two commits sharing files) keep a shared blob until both are over.
// Eviction deletes the blob (and its .incomplete), the snapshot links to it, snapshot folders
// left empty and refs that then point nowhere (restoring the ref's value at opening when that
// snapshot still exists), so huggingface_hub.scan_cache_dir still reports no warnings.
//
// Across restarts: with a ledger file, the blobs the campaign brought are listed there (written
// atomically before each download starts), so a resumed campaign counts and may evict them
// instead of taking them for the user's.
//
// Thread safety: every method may be called from any thread (one mutex); acquire() blocks
// only its caller. Eviction's file deletions happen under the mutex.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "core/model_id.h"
#include "core/result.h"
#include "hub/checkpoint_download.h"
#include "hub/hf_cache.h"

namespace canrun::campaign {

//! The reason of acquire()'s error for a checkpoint that alone needs more than the budget.
inline constexpr std::string_view kOverDiskBudget = "over_disk_budget";

//! One blob a checkpoint needs: blobs/<name> of its repo and its size.
struct BlobNeed {
  std::string name;
  std::uint64_t bytes = 0;
};

//! What one test needs in the HF cache: a repo at a commit and its blobs.
struct CheckpointNeed {
  ModelId model;
  std::string commit;           //!< 40 hex digits
  std::vector<BlobNeed> blobs;  //!< each blob once

  //! The blobs of a manifest's files (a blob two files share, once).
  static CheckpointNeed from_manifest(const hub::CheckpointManifest& manifest);
};

//! Room held for one checkpoint, from acquire() to release().
struct FetchTicket {
  std::uint64_t id = 0;
  ModelId model;
  std::string commit;
  std::uint64_t bytes_reserved = 0;  //!< what this acquire added to bytes_held()
};

class DiskBudget {
 public:
  struct Options {
    std::uint64_t budget_bytes = 0;               //!< --disk-budget, in bytes
    std::optional<std::filesystem::path> ledger;  //!< where the campaign's blobs are listed
  };

  //! Records what the cache holds now (never deleted) and reads the ledger: listed blobs still
  //! there (or their .incomplete) count as the campaign's, held by no ticket. Errors: a budget
  //! of 0, a ledger that cannot be read or holds a malformed line.
  static Result<std::unique_ptr<DiskBudget>> open(hub::HfCache cache, Options options);

  //! Holds room for `need`, evicting released blobs as needed, waiting for release() when that
  //! is not enough. Errors: kFailedCheck with reason kOverDiskBudget when the need alone is
  //! larger than the budget; kUnavailable when `stop` is requested or cancel() was called while
  //! waiting; kIoError when an eviction or the ledger cannot be written.
  Result<FetchTicket> acquire(const CheckpointNeed& need, std::stop_token stop = {});
  //! As acquire(), but never waits: nullopt when the room is not there now.
  Result<std::optional<FetchTicket>> try_acquire(const CheckpointNeed& need);
  //! The test is over (or the download failed): the ticket's blobs may be evicted when room is
  //! needed, not before. Blobs reserved but never written are unreserved at once. Releasing a
  //! ticket twice is ignored.
  void release(const FetchTicket& ticket);
  //! Wakes every waiting acquire() with an error; later waits fail at once.
  void cancel();
  //! Evicts every released blob now (e.g. when the campaign ends and should leave no copy).
  Status evict_released();

  std::uint64_t budget_bytes() const { return options_.budget_bytes; }
  //! Bytes of the campaign's blobs: reserved, being downloaded or on disk.
  std::uint64_t bytes_held() const;
  //! The most bytes_held() has been since open().
  std::uint64_t peak_bytes_held() const;
  //! Blobs the campaign brought that are still held or on disk ("models--o--n/<blob>").
  std::vector<std::string> campaign_blobs() const;

 private:
  struct BlobState {
    std::uint64_t counted = 0;       // bytes counted in held_
    int tickets = 0;                 // unreleased tickets that need it
    std::uint64_t released_seq = 0;  // when `tickets` last fell to 0 (eviction order)
  };
  struct TicketState {
    ModelId model;
    std::string commit;
    std::vector<std::string> keys;
  };

  DiskBudget(hub::HfCache cache, Options options) : cache_(std::move(cache)), options_(options) {}

  Status scan_start();
  Status read_ledger();
  //! Lists the campaign's blobs and `extra` in the ledger (atomically), when there is one.
  Status write_ledger(const std::vector<std::string>& extra);
  //! The key of a repo's blob: "models--owner--name/<blob>".
  std::string key_of(const ModelId& model, std::string_view blob) const;
  std::filesystem::path blob_path(const std::string& key) const;
  //! Under the lock: a ticket when the room is there now (evicting as needed), else nullopt.
  Result<std::optional<FetchTicket>> try_acquire_locked(const CheckpointNeed& need);
  //! Under the lock: deletes one blob and what points to it, and uncounts it.
  Status evict_locked(const std::string& key);
  void add_held_locked(std::uint64_t bytes);

  hub::HfCache cache_;
  Options options_;
  mutable std::mutex mutex_;
  std::condition_variable_any room_;
  // What the cache held at opening, by key "models--o--n/...": never deleted.
  std::set<std::string> start_repos_;                // "models--o--n"
  std::set<std::string> user_blobs_;                 // ".../<blob>", and blobs others fetched since
  std::set<std::string> start_snapshots_;            // ".../<commit>"
  std::set<std::string> start_links_;                // ".../<commit>/<file>"
  std::map<std::string, std::string> start_refs_;    // ".../<ref>" → commit
  std::map<std::string, BlobState> campaign_blobs_;  // what the campaign brought
  std::map<std::uint64_t, TicketState> tickets_;
  std::uint64_t held_ = 0;
  std::uint64_t peak_ = 0;
  std::uint64_t next_ticket_ = 1;
  std::uint64_t release_seq_ = 0;
  std::uint64_t generation_ = 0;  // bumped by release() and cancel(): waiters look again
  bool cancelled_ = false;
};

}  // namespace canrun::campaign
