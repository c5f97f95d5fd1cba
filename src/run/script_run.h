// Running one rendered run.py under supervision: in its own folder (run.py, then stdout.txt
// and stderr.txt beside it), with the environment the backend profile asks for (compile cache,
// the cores it is given, the profile's own variables), under a time limit; then its result line.
//
// Thread safety: free functions; several scripts may run at once, each in its own folder.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "backend/pinning.h"
#include "backend/profile.h"
#include "core/result.h"
#include "process/process.h"
#include "run/result_line.h"

namespace canrun::run {

struct ScriptRun {
  process::ProcessOutcome outcome;
  std::optional<RunReport> report;  //!< none: no (readable) result line
};

//! What a script needs to know of where it runs.
struct ScriptPlace {
  std::filesystem::path cache_dir;  //!< compile caches go below it, per compiler version
  std::string compiler_version;
  backend::CoreRange cores;            //!< the cores it may use (run.py gives each rank its share)
  std::optional<std::string> pinning;  //!< the pinning variable's value; empty: from `cores`
  //! Folders put first on PYTHONPATH: packages installed on top of the stack for this run.
  std::vector<std::filesystem::path> python_path;
};

//! The environment of a run: the allow-list of canrun's own that code a model steers gets
//! (process::environment_for, Audience::kRun: no secret), plus what the profile and the place
//! need.
std::map<std::string, std::string> script_environment(const backend::BackendProfile& profile,
                                                      const ScriptPlace& place);

//! The folders a run writes besides its own (and creates them): the compile cache of its
//! compiler version and its node-local tier, which the profile's cache variables name. A box
//! leaves them writable.
std::vector<std::filesystem::path> script_caches(const backend::BackendProfile& profile,
                                                 const ScriptPlace& place);

//! A fresh folder under `work_dir`: <model id with / as _>-<what>-<ms>-<pid>-<n>.
Result<std::filesystem::path> make_run_dir(const std::filesystem::path& work_dir,
                                           std::string_view model_id, std::string_view what);

//! Writes `script` as dir/run.py and runs `python run.py` there, with a home (dir/home) and a
//! temporary folder of its own (process::OwnFolders), in a box where this machine allows one
//! (process::isolation()) in which only those and `caches` are writable. An error means it
//! could not be started; how it ended is in the outcome.
Result<ScriptRun> run_script(const std::string& script, const std::filesystem::path& dir,
                             const std::string& python, std::map<std::string, std::string> env,
                             std::chrono::seconds timeout, process::ProcessLauncher& launcher,
                             const std::vector<std::filesystem::path>& caches);

//! What the run in `dir` printed, for the dataset's failure logs: its stdout, then its stderr
//! (so the end, where a traceback is, comes last), each under a header line. Empty when the
//! folder holds neither file (no run, or not in this folder).
std::string run_log(const std::filesystem::path& dir);

}  // namespace canrun::run
