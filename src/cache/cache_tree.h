// A compile cache folder as canrun reads it: its files, its entries, and what each version
// folder holds.
//
// Entries. A Neuron cache is laid out in one of two ways, by the torch-neuronx it comes from:
//   - TorchNeuron, torch-neuronx's native PyTorch backend (public beta in Neuron 2.33.0), keeps
//     one NEFF per compiled graph in TORCH_NEURONX_NEFF_CACHE_DIR, hash-sharded into two levels
//     of folders (ab/cd/abcd….neff), each written atomically: a temp file beside it, renamed into
//     place (AWS Neuron docs "TorchNeuron environment variables", torch/reference/env-vars; "What
//     are Neuron Compiler artifacts?", compiler/about-compiler-artifacts). So a NEFF file that
//     is there is a complete entry of its own, as any other file below.
//   - the older torch-xla based torch-neuronx (NEURON_COMPILE_CACHE_URL; maintenance only, not
//     shipped from Neuron 2.32) caches each graph in a folder MODULE_<hash>+<hash> under
//     neuronxcc-<version>/, holding model.neff, model.hlo_module.pb, compile_flags.json and, once
//     the compile succeeded, model.done; a failed compile leaves model.log and no model.done.
// So an entry is:
//   - for a file below a folder whose name starts with "MODULE_": that folder (the first such
//     one on the file's path, with the folders above it), e.g.
//     "neuronxcc-2.16.372.0+4a9b2326/MODULE_1234+abcd". It is complete when it holds model.done
//     at its top, failed when it holds model.log there but no model.done, and incomplete
//     otherwise (a compile in progress, or one cut short);
//   - for any other file: the file alone, complete unless it is a write in progress (below).
//     Caches without a completion marker (TorchNeuron's, TorchInductor's FX-graph and kernel
//     caches of the cpu and cuda backends) write each file whole and rename it into place, so
//     a file that is there under its own name is usable.
// A tree may mix them; a tree whose root is itself a MODULE_ folder is read as plain files.
//
// Writes in progress. Outside MODULE_ folders, a file whose name starts with '.' or ends with
// ".tmp" is taken for the temp file of an atomic write not yet renamed into place: an entry of
// its own, incomplete. It is counted as such, never copied, and never deleted at a sync's
// destination (its writer may be about to rename it). The rule comes from the writers' code,
// not from documentation: TorchNeuron's cache writes ".tmp.XXXXXX" (mkstemp) beside the NEFF,
// torch-neuronx's Python helper "tmp*.tmp", TorchInductor ".<pid>.<thread>.tmp". A release
// that names its temp files otherwise has them read as complete entries, and a temp file a
// crashed writer left stays, counted incomplete, until it is removed by hand.
//
// Versions. canrun keeps a backend's compile caches in CANRUN_CACHE/compile/<backend>/, one
// folder per compiler version (<compiler>-<version>, see run/script_run.cc), and an XLA-era
// Neuron cache names its own neuronxcc-<version>/ folders; cache_stats counts per top-level
// folder. TorchNeuron's cache has no version folder: its top-level folders are hash shards. A
// top-level folder named by hex digits alone is such a shard, and what it holds counts under
// the tree's own name.
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

//! True for a file (its relative path) that is the temp file of a write in progress: outside
//! MODULE_* folders, a name starting with '.' or ending with ".tmp".
bool is_write_in_progress(std::string_view path);

//! Why an entry that is not complete is not: "a write in progress" or "no model.done".
std::string_view not_complete_reason(std::string_view entry);

//! The state of every entry the files of one tree (relative paths) make up, by entry.
std::map<std::string, EntryState> entry_states(const std::vector<std::string>& paths);

//! Where compiled graphs are kept: $CANRUN_COMPILE_CACHE (made absolute) when set, so that
//! several cache folders can share one (the test suite's trials, a team's machine), else
//! <cache>/compile.
std::filesystem::path compile_cache_root(const std::filesystem::path& cache_root);

//! Where CPU references are kept: $CANRUN_REFERENCE_CACHE (made absolute) when set, else
//! <cache>/references. A reference depends on the model, its revision, the task, the inputs,
//! the dtype and the stack's library, never on the backend under test: campaigns of several
//! backends (or cache folders) may share one, as the test suite's trials do.
std::filesystem::path reference_cache_root(const std::filesystem::path& cache_root);

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

//! The node-local tier of a compiler version's cache (TorchNeuron's
//! TORCH_NEURONX_NEFF_LOCAL_CACHE_DIR): <cache>/compile-local/<backend>/<compiler>-<version>,
//! always under canrun's own cache folder, never under a shared $CANRUN_COMPILE_CACHE, and
//! outside the folders `canrun cache stats` and sync read.
std::filesystem::path local_compiler_cache_dir(const std::filesystem::path& cache_root,
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
//! at the top (a MODULE_ folder or a file there) or in a hash folder there (TorchNeuron's
//! ab/cd/ shards) count under `root_name`, the tree's own name, as when a single version was
//! fetched into a folder of its own.
std::vector<VersionStats> cache_stats(const std::vector<CacheFile>& files,
                                      std::string_view root_name);

}  // namespace canrun::cache
