// Fetching a whole checkpoint — the files of a repo at one commit — into the HF cache, laid out
// as huggingface_hub lays it out (hf_cache.h), so that transformers loads it with
// HF_HUB_OFFLINE=1 and huggingface_hub.scan_cache_dir finds nothing wrong.
//
// The file list, with each file's size and blob name, comes from the Hub's tree listing
// (/api/models/{id}/tree/{commit}?recursive=true): known before any byte is fetched, so a disk
// budget can be asked for room first. Each file is then:
//   - streamed to blobs/<etag>.incomplete, never held in memory;
//   - resumed: an .incomplete left by an interruption (this run's or an earlier process's) is
//     continued with a Range request from its size;
//   - verified: the size against the Hub's headers (X-Linked-Size, Content-Range or
//     Content-Length) and the tree; the content against its name, the sha256 the ETag /
//     X-Linked-Etag names for LFS files and the git blob sha1 for the others. A mismatch deletes
//     the partial file and is a kCorrupt error naming the file;
//   - renamed to blobs/<etag> and linked from snapshots/<commit>/<file>, under the flock
//     huggingface_hub takes for that blob (.locks/...), so the two never write one blob at once.
// A file whose blob is already in the cache (another commit of the repo, the user's own
// download) is linked, not fetched.
//
// Errors are values: the Hub's 401/403 keeps reason::kGated, its 404 reason::kNotFound.
//
// Thread safety: as HubClient (one thread at a time per client). Downloads of one checkpoint
// from several processes or threads, each with its own client, are safe: blobs are written
// under their lock, and a blob another writer finished is linked, not fetched again.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "core/model_id.h"
#include "core/result.h"
#include "hub/checkpoint_manifest.h"
#include "hub/hf_cache.h"
#include "hub/hub_client.h"

namespace canrun::hub {

//! Where a download stands: bytes of the checkpoint in the cache (reused ones included).
struct DownloadProgress {
  std::uint64_t bytes_done = 0;
  std::uint64_t bytes_total = 0;
  std::string_view file;  //!< the file being fetched
};

struct CheckpointDownloadOptions {
  //! Called as bytes arrive (at most every 4 MiB and at each file's end), on the caller's
  //! thread; may be empty.
  std::function<void(const DownloadProgress&)> progress;
  //! Interrupted transfers of one file continued with a Range request before giving up.
  int max_resumes = 5;
  //! When requested, the download stops at its next bytes (kUnavailable), the partial file
  //! kept for a later call to continue.
  std::stop_token stop;
};

//! What a download did.
struct DownloadedCheckpoint {
  std::filesystem::path snapshot;   //!< snapshots/<commit> in the cache
  std::uint64_t bytes_fetched = 0;  //!< bytes that came over the network in this call
  std::uint64_t bytes_reused = 0;   //!< bytes already in the cache (blobs and partial files)
  int resumed_transfers = 0;        //!< Range requests that continued a partial file
};

//! Fetches every file of `manifest` that the cache lacks, then points refs/<ref> at the
//! commit when the manifest has a ref. Offline (HF_HUB_OFFLINE) is kUnavailable unless the
//! cache already holds every file. On an error, finished files stay and a partial one stays
//! as .incomplete for the next call to resume, except when its bytes were wrong.
Result<DownloadedCheckpoint> download_checkpoint(HubClient& client, const HfCache& cache,
                                                 const CheckpointManifest& manifest,
                                                 const CheckpointDownloadOptions& options = {});

}  // namespace canrun::hub
