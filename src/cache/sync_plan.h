// What `canrun cache sync` does to a destination, decided before anything is touched.
//
// Files are compared one by one as `hf buckets sync` compares them, so a sync behaves the same
// whether a side is a local folder or a Storage Bucket: a source file is copied when the
// destination lacks it, its size differs, or the source's is newer by more than 1 s; with
// `--delete`, a destination file the source lacks is deleted; nothing is deleted otherwise.
// Then the entry rules of cache_tree.h apply: the files of a source entry that is not complete
// (failed or incomplete, a write in progress among them) are neither copied nor deleted at the
// destination, and that entry is listed as skipped. A destination file is deleted only when its
// entry is absent from the source, or complete in the source without that file, and never when
// it is a write in progress (the temp file of an atomic write, which its writer renames).
//
// Thread safety: pure functions over values.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cache/cache_tree.h"

namespace canrun::cache {

enum class SyncAction { kCopy, kDelete, kSkip };

//! "copy", "delete" or "skip".
std::string_view sync_action_name(SyncAction action);

struct SyncStep {
  SyncAction action = SyncAction::kSkip;
  std::string path;       //!< relative to both roots, '/'-separated
  std::int64_t size = 0;  //!< the source file's bytes; a deleted file's own
  std::string reason;     //!< "new file", "size differs", "source newer", "unchanged", ...
};

struct SkippedEntry {
  std::string entry;
  EntryState state = EntryState::kIncomplete;  //!< failed or incomplete
};

struct SyncPlan {
  //! Copies (every model.done last, so a destination entry looks complete only once its other
  //! files are there), then deletes (every model.done first), then unchanged files.
  std::vector<SyncStep> steps;
  std::vector<SkippedEntry> skipped_entries;  //!< sorted by entry

  std::size_t count(SyncAction action) const;
  std::int64_t bytes(SyncAction action) const;
};

//! Two file lists (each sorted by path) compared file by file: one step for every source file
//! (copy or skip) and, with `delete_extra`, one delete per destination file the source lacks.
std::vector<SyncStep> compare_files(const std::vector<CacheFile>& source,
                                    const std::vector<CacheFile>& destination, bool delete_extra);

//! Holds per-file steps to the entry rules. `steps` must hold a copy or skip step for every
//! source file, as compare_files and `hf buckets sync --plan` give them: the source's entries
//! are read from those.
SyncPlan plan_sync(std::vector<SyncStep> steps);

}  // namespace canrun::cache
