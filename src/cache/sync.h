// canrun cache sync: a compile cache brought from one place to another, copying only what
// differs and only complete entries (sync_plan.h says exactly what is copied and deleted).
//
// Each side is a local folder (a path, or file://PATH) or a folder of a Hugging Face Storage
// Bucket (hf://buckets/<namespace>/<bucket>[/<path>]); at most one side is a bucket.
//   - local → local: canrun compares the two trees and copies each file atomically (a hidden
//     partial file beside it, renamed into place, modification time kept so a second sync
//     finds nothing to do).
//   - with a bucket: through huggingface_hub's CLI (hub/hf_cli.h). canrun asks `hf` for
//     the plan (`hf buckets sync SRC DST [--delete] --plan FILE`), holds that plan to the entry
//     rules, and applies what is left (`hf buckets sync --apply FILE`); a dry run stops after
//     the plan. The environment (HF_TOKEN, HF_ENDPOINT, ...) is passed on as it is.
//
// Thread safety: sync_cache may run concurrently for different destinations.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "cache/sync_plan.h"
#include "core/result.h"
#include "process/process.h"

namespace canrun::cache {

struct CacheLocation {
  enum class Kind { kLocal, kBucket };
  Kind kind = Kind::kLocal;
  std::string text;             //!< as the user gave it, for messages
  std::filesystem::path local;  //!< kLocal: the folder
  std::string bucket_uri;       //!< kBucket: hf://buckets/<ns>/<bucket>[/<path>], no trailing '/'

  bool is_bucket() const { return kind == Kind::kBucket; }
};

//! A path, file://PATH (or file://localhost/PATH), or hf://buckets/<ns>/<bucket>[/<path>].
//! kInvalidArgument names the text and what is wrong: another host, another hf:// kind, a
//! bucket id that breaks the Hub's naming rules.
Result<CacheLocation> parse_location(std::string_view text);

struct SyncRequest {
  CacheLocation source;
  CacheLocation destination;
  bool delete_extra = false;  //!< delete destination files the source lacks
  bool dry_run = false;       //!< plan only; change nothing
};

//! Plans the sync and, unless a dry run, carries it out; returns the plan. Errors: the source
//! missing (kNotFound) or not a folder, a destination inside the source, two buckets
//! (kInvalidArgument); `hf` not on PATH (kNotFound, naming `pip install huggingface_hub`); `hf`
//! failing (kUnavailable, with what it printed); a copy failing (kIoError). Copies done before
//! an error stay; a later sync goes on from there.
Result<SyncPlan> sync_cache(const SyncRequest& request, process::ProcessLauncher& launcher);

}  // namespace canrun::cache
