// A compile cache folder as canrun reads it: its files, its entries, and what each version
// folder holds.
//
// Entries. The Neuron compiler caches each compiled graph in a folder MODULE_<hash>+<hash>
// (under neuronxcc-<version>/) holding model.neff, model.hlo_module.pb, compile_flags.json and,
// once the compile succeeded, model.done; a failed compile leaves model.log and no model.done.
// So an entry is:
//   - for a file below a folder whose name starts with "MODULE_": that folder (the first such
//     one on the file's path, with the folders above it), e.g.
//     "neuronxcc-2.16.372.0+4a9b2326/MODULE_1234+abcd". It is complete when it holds model.done
//     at its top, failed when it holds model.log there but no model.done, and incomplete
//     otherwise (a compile in progress, or one cut short);
//   - for any other file: the file alone, always complete. Caches without a completion marker
//     (TorchInductor's FX-graph and kernel caches, the cpu and cuda backends) write each file
//     whole and rename it into place, so a file that is there is usable.
// A tree may mix both; a tree whose root is itself a MODULE_ folder is read as plain files.
//
// Versions. canrun keeps a backend's compile caches in CANRUN_CACHE/compile/<backend>/, one
// folder per compiler version (<compiler>-<version>, see run/script_run.cc), and a Neuron cache
// names its own neuronxcc-<version>/ folders; cache_stats counts per top-level folder.
//
// Thread safety: free functions; list_cache_files reads the file system and nothing else.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace canrun::cache {

//! The completion marker of a Neuron cache entry, and the log a failed compile leaves.
inline constexpr std::string_view kDoneMarker = "model.done";
inline constexpr std::string_view kFailedLog = "model.log";

struct CacheFile {
  std::string path;           //!< relative to the tree's root, '/'-separated
  std::int64_t size = 0;      //!< bytes
  std::int64_t mtime_ms = 0;  //!< modification time, milliseconds since the epoch
};

enum class EntryState { kComplete, kFailed, kIncomplete };

//! "complete", "failed" or "incomplete".
std::string_view entry_state_name(EntryState state);

//! The entry a file (its relative path) belongs to: its first MODULE_* folder, or itself.
std::string entry_of(std::string_view path);

//! The state of every entry the files of one tree (relative paths) make up, by entry.
std::map<std::string, EntryState> entry_states(const std::vector<std::string>& paths);

//! Where compiled graphs are kept: $CANRUN_COMPILE_CACHE (made absolute) when set, so that
//! several cache folders can share one (the test suite's trials, a team's machine), else
//! <cache>/compile.
std::filesystem::path compile_cache_root(const std::filesystem::path& cache_root);

//! Where a backend's compile caches live: compile_cache_root(cache)/<backend>, one folder per
//! compiler version below it (run/script_run.cc points the backend's cache variable there).
std::filesystem::path backend_cache_dir(const std::filesystem::path& cache_root,
                                        std::string_view backend);

//! The folder of one compiler version below it: <compile root>/<backend>/<compiler>-<version>,
//! the same name in a shared cache (a campaign's --compile-cache).
std::string compiler_cache_name(std::string_view compiler, std::string_view version);
std::filesystem::path compiler_cache_dir(const std::filesystem::path& cache_root,
                                         std::string_view backend, std::string_view compiler,
                                         std::string_view version);

//! kNotFound when `root` does not exist, kInvalidArgument when it is not a folder.
Status check_cache_folder(const std::filesystem::path& root);

//! Every regular file under `root`, sorted by path. Symbolic links are not followed, and the
//! partial copies a running sync writes (kPartialPrefix) are left out. Errors as
//! check_cache_folder's, or kIoError when a folder cannot be read.
Result<std::vector<CacheFile>> list_cache_files(const std::filesystem::path& root);

//! Names of the hidden files a local sync writes before renaming them into place.
inline constexpr std::string_view kPartialPrefix = ".canrun-partial-";

struct VersionStats {
  std::string version;  //!< the top-level folder
  std::size_t entries = 0;
  std::size_t complete = 0;
  std::size_t failed = 0;
  std::size_t incomplete = 0;
  std::int64_t bytes = 0;  //!< every file of the folder, whatever its entry's state
};

//! Entries and bytes per top-level folder of a tree, sorted by folder name. Entries directly
//! at the top (a MODULE_ folder or a file there) count under `root_name`, the tree's own name,
//! as when a single version was fetched into a folder of its own.
std::vector<VersionStats> cache_stats(const std::vector<CacheFile>& files,
                                      std::string_view root_name);

}  // namespace canrun::cache
