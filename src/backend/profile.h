// BackendProfile: one backends/<name>.toml (SPEC.md §4) — the device, the torch.compile
// backend, the dtype, the topology the planner uses, how to pin a process to cores, how peak
// memory is read, and the compile cache.
//
// The compile cache ([cache]): `env` names its folder, which canrun sets to its own folder per
// compiler version (run/script_run.cc), and `local_env` a node-local tier beside it;
// `default_dir` is the folder the backend uses when `env` is unset, so the one run.py uses when
// a user runs it alone, and `prefetch` (a command with {compiler_version} and {cache_dir})
// fills that same folder: {cache_dir} becomes "${env:-default_dir}", the folder the backend
// will read in the shell the command runs in.
//
// Profiles are found by name in the backends folders (find_profile) or given as a path, so a
// team can test an in-development backend: compile_backend may be "module:function".
//
// Thread safety: immutable values.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace canrun::backend {

inline constexpr double kBytesPerGiB = 1024.0 * 1024.0 * 1024.0;

struct Topology {
  int cores_per_device = 1;
  int devices = 1;
  double memory_per_core_gib = 0;
  double reserve_gib = 0;
  std::vector<int> degrees;  //!< allowed shard degrees, increasing
  int max_cores = 1;

  //! Bytes of weights one core holds: its memory less the reserve (negative when the reserve
  //! is larger).
  double core_budget_bytes() const { return (memory_per_core_gib - reserve_gib) * kBytesPerGiB; }
};

//! A profile without [perf] eager_max_s cuts each eager baseline call at this many seconds.
inline constexpr double kDefaultEagerMaxSeconds = 60;

struct BackendProfile {
  std::filesystem::path source;  //!< the file it was read from
  std::string name;
  std::string description;
  std::string device;           //!< recorded in the dataset's device column
  std::string torch_device;     //!< "cpu", "cuda", "neuron"
  std::string compile_backend;  //!< registered name, "module:function", or empty for eager
  std::map<std::string, bool> compile_options;  //!< e.g. fullgraph = true
  //! env var naming the folder for the compiler's working files; canrun sets it to a folder in
  //! each run's own folder (run_folder_env). Empty: the backend's default.
  std::string compile_artifacts_env;
  std::string distributed_backend;
  std::string dtype;  //!< torch dtype name: float32, bfloat16, float16
  std::string compiler;
  std::string compiler_package;            //!< pip package whose version is the compiler version
  std::vector<std::string> packages;       //!< packages whose versions make up the stack
  std::vector<std::string> imports;        //!< modules run.py imports first (e.g. torch_neuronx)
  std::map<std::string, std::string> env;  //!< extra environment for the run
  Topology topology;
  std::string pinning_env;
  std::string pinning_syntax;  //!< "count", "range" or "list"
  std::string peak_memory;     //!< "rss", "cuda" or "neuron"
  //! [perf] eager_max_s: where run.py cuts each call of the eager baseline (a backend whose
  //! eager mode is slow, such as neuron's, is measured on what it made by then).
  double eager_max_s = kDefaultEagerMaxSeconds;
  std::string cache_env;          //!< env var naming the compile-cache folder; empty for none
  std::string cache_default_dir;  //!< the backend's folder when cache_env is unset; empty: none
  std::string cache_local_env;    //!< env var naming a node-local cache tier; empty for none
  //! Command template with {compiler_version} and {cache_dir}; empty for none.
  std::string cache_prefetch;

  //! The folder run.py uses run alone, as a shell names it: "${cache_env:-cache_default_dir}",
  //! or cache_default_dir when there is no cache_env. Empty without a default folder.
  std::string cache_dir_for_shell() const;

  //! cache_prefetch with {cache_dir} filled in (cache_dir_for_shell); {compiler_version} stays.
  std::string prefetch_template() const;

  //! The prefetch command for a compiler version, or empty when the backend has no public cache.
  std::string prefetch_command(std::string_view compiler_version) const;

  //! The variables that name folders inside a run's own folder `run_dir`: compile_artifacts_env
  //! as run_dir/compile-artifacts. Empty when the profile names none.
  std::map<std::string, std::string> run_folder_env(const std::filesystem::path& run_dir) const;
};

//! Parses a profile; errors name the file, the key and what is wrong.
Result<BackendProfile> parse_profile(std::string_view toml_text,
                                     const std::filesystem::path& source);
Result<BackendProfile> load_profile(const std::filesystem::path& path);

//! The folders searched for <name>.toml, in order: $CANRUN_BACKENDS (colon-separated), then
//! backends/ beside the folder of the canrun executable's folder (the source tree for a
//! build in build/), then share/canrun/backends beside it (an installed tree).
std::vector<std::filesystem::path> profile_search_path();

//! `name_or_path` is a profile name ("cpu") or a path to a .toml file. kNotFound names the
//! folders searched.
Result<BackendProfile> find_profile(std::string_view name_or_path);

//! Sets memory per core (when > 0) and the reserve (when >= 0) from the command line;
//! kInvalidArgument for a negative memory, or a reserve that leaves nothing of a core.
Status override_memory(Topology& topology, double memory_per_core_gib, double reserve_gib);

}  // namespace canrun::backend
