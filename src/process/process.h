// Supervised subprocesses: the seam between canrun and the OS for running run.py.
//
// A process runs in its own process group and folder, with the environment given (nothing
// inherited implicitly), stdin from /dev/null, and stdout/stderr captured into bounded
// buffers that keep the tail (a script printing gigabytes costs a fixed amount of memory).
// Past its time limit the whole group gets SIGTERM, then SIGKILL after a grace period; when
// the main process ends, whatever is left of its group is killed too, so no process of a
// test outlives it (a descendant that leaves the group with setsid() is not tracked).
//
// Thread safety: a ProcessLauncher may run several processes at once from several threads.
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "process/box.h"

namespace canrun::process {

struct ProcessSpec {
  std::vector<std::string> argv;  //!< argv[0] is looked up on PATH when it has no '/'
  std::map<std::string, std::string> env;
  std::filesystem::path cwd;
  std::chrono::milliseconds timeout{std::chrono::minutes(30)};
  std::chrono::milliseconds kill_grace{std::chrono::seconds(5)};
  std::size_t output_limit = 1 << 20;  //!< bytes kept of each of stdout and stderr (the tail)
  //! Called with the process group as soon as it started, e.g. to journal it: should canrun
  //! itself die, a later canrun can end what is left of the group.
  std::function<void(int pgid)> on_start;
  //! Runs it in a box (process/box.h): canrun's helper starts it, inside.
  std::optional<BoxSpec> box;
};

struct ProcessOutcome {
  std::optional<int> exit_code;    //!< set when the process exited
  std::optional<int> term_signal;  //!< set when a signal ended it
  bool timed_out = false;
  std::string stdout_tail;
  std::string stderr_tail;
  std::size_t stdout_bytes = 0;  //!< everything it printed, kept or not
  std::size_t stderr_bytes = 0;
  double wall_s = 0;
  double timeout_s = 0;  //!< the limit it ran under
  int pgid = 0;          //!< its process group, gone when run() returns
};

class ProcessLauncher {
 public:
  virtual ~ProcessLauncher() = default;
  //! Runs to completion (or the time limit). An error means it could not be started.
  virtual Result<ProcessOutcome> run(const ProcessSpec& spec) = 0;
};

//! posix_spawn-based launcher for this machine.
std::unique_ptr<ProcessLauncher> make_posix_launcher();

//! The current environment as a map, to start a ProcessSpec::env from. Variables naming
//! folders that the stack's libraries read (HF_HOME, HF_HUB_CACHE, CANRUN_CACHE,
//! XDG_CACHE_HOME, TORCHINDUCTOR_CACHE_DIR and the like) are made absolute: a process runs in
//! its own folder, where a relative one would name another place.
std::map<std::string, std::string> current_environment();

//! True when `name` is `prefix`<pid> or `prefix`<pid>-… and no process <pid> exists: a
//! folder that a canrun process (or a box's helper) named for itself and left when killed.
bool named_for_a_gone_process(std::string_view name, std::string_view prefix);

//! Keeps the last `limit` bytes appended, and counts all of them.
class TailBuffer {
 public:
  explicit TailBuffer(std::size_t limit) : limit_(limit) {}
  void append(std::string_view bytes);
  std::string take();
  std::size_t total() const { return total_; }

 private:
  std::size_t limit_;
  std::size_t total_ = 0;
  std::string data_;
};

}  // namespace canrun::process
