#include "process/process.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>

extern char** environ;

namespace canrun::process {
namespace {

using Clock = std::chrono::steady_clock;

//! Variables naming folders that the stack's libraries read (Hugging Face, torch, canrun).
constexpr const char* kFolderVariables[] = {
    "HF_HOME",      "HF_HUB_CACHE",   "HF_DATASETS_CACHE",       "TRANSFORMERS_CACHE",
    "CANRUN_CACHE", "XDG_CACHE_HOME", "TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR"};

void TailTrim(std::string& data, std::size_t limit) {
  if (data.size() > limit) data.erase(0, data.size() - limit);
}

//! Closes a file descriptor when it goes out of scope.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  void reset() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

//! Kills what is left of process group `pgid` and reaps it. canrun is a child subreaper, so
//! the group's orphans are its children and waitpid(-pgid) collects them; it returns once no
//! process (not even a zombie) of the group is left, or after 10 s.
void reap_group(pid_t pgid) {
  const auto give_up = Clock::now() + std::chrono::seconds(10);
  while (::kill(-pgid, SIGKILL) == 0 && Clock::now() < give_up) {
    while (::waitpid(-pgid, nullptr, WNOHANG) > 0) {
    }
    ::usleep(1000);
  }
}

class PosixLauncher final : public ProcessLauncher {
 public:
  PosixLauncher() {
    // Orphans of a test (a compile worker whose parent died) become our children, not
    // init's, so that reap_group can collect every one of them.
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  }
  Result<ProcessOutcome> run(const ProcessSpec& spec) override;
};

Result<ProcessOutcome> PosixLauncher::run(const ProcessSpec& spec) {
  if (spec.argv.empty()) return invalid_argument("no command to run");
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0)
    return io_error(fmt::format("pipe: {}", std::strerror(errno)));
  Fd out_read{out_pipe[0]}, out_write{out_pipe[1]};
  if (::pipe2(err_pipe, O_CLOEXEC) != 0)
    return io_error(fmt::format("pipe: {}", std::strerror(errno)));
  Fd err_read{err_pipe[0]}, err_write{err_pipe[1]};

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_write.fd, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err_write.fd, STDERR_FILENO);
  if (!spec.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, spec.cwd.c_str());

  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t no_signals, default_signals;
  sigemptyset(&no_signals);
  sigfillset(&default_signals);
  posix_spawnattr_setsigmask(&attributes, &no_signals);
  posix_spawnattr_setsigdefault(&attributes, &default_signals);
  posix_spawnattr_setpgroup(&attributes, 0);  // its own process group
  posix_spawnattr_setflags(&attributes,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  std::vector<std::string> env_entries;
  for (const auto& [key, value] : spec.env) env_entries.push_back(key + "=" + value);
  std::vector<char*> envp;
  for (auto& entry : env_entries) envp.push_back(entry.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = spec.argv;
  // A relative program path names a file from here, not from the child's folder.
  if (args.front().find('/') != std::string::npos && !spec.cwd.empty() &&
      std::filesystem::path(args.front()).is_relative()) {
    args.front() = std::filesystem::absolute(args.front()).lexically_normal().string();
  }
  std::vector<char*> argv;
  for (auto& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);

  // posix_spawnp searches PATH of *this* process; use the child's PATH when given.
  std::string program = args.front();
  if (program.find('/') == std::string::npos) {
    const auto path = spec.env.find("PATH");
    const std::string search = path != spec.env.end() ? path->second : "/usr/bin:/bin";
    for (std::size_t start = 0; start <= search.size();) {
      const std::size_t end = std::min(search.find(':', start), search.size());
      const std::string candidate = search.substr(start, end - start) + "/" + program;
      if (::access(candidate.c_str(), X_OK) == 0) {
        program = candidate;
        break;
      }
      start = end + 1;
    }
  }

  if (spec.box) {
    args.front() = program;
    args = boxed_argv(*spec.box, args);
    program = args.front();
    argv.clear();
    for (auto& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
  }

  const auto started = Clock::now();
  pid_t pid = 0;
  const int spawned =
      ::posix_spawn(&pid, program.c_str(), &actions, &attributes, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (spawned != 0) {
    return io_error(fmt::format("cannot start {}: {}", args.front(), std::strerror(spawned)));
  }
  out_write.reset();
  err_write.reset();

  ProcessOutcome outcome;
  outcome.pgid = pid;
  if (spec.on_start) spec.on_start(pid);
  outcome.timeout_s = std::chrono::duration<double>(spec.timeout).count();
  TailBuffer out(spec.output_limit), err(spec.output_limit);
  const auto deadline = started + spec.timeout;
  std::optional<Clock::time_point> kill_at;  // when SIGKILL follows the SIGTERM
  bool exited = false;
  int status = 0;
  std::optional<Clock::time_point> drain_until;  // after exit: stragglers may hold the pipes
  char buffer[65536];

  while (out_read.fd >= 0 || err_read.fd >= 0 || !exited) {
    const auto now = Clock::now();
    if (!exited && !outcome.timed_out && now >= deadline) {
      outcome.timed_out = true;
      ::kill(-pid, SIGTERM);
      kill_at = now + spec.kill_grace;
    }
    if (kill_at && now >= *kill_at) {
      ::kill(-pid, SIGKILL);
      kill_at.reset();
    }
    if (!exited) {
      const pid_t waited = ::waitpid(pid, &status, WNOHANG);
      if (waited == pid) {
        exited = true;
        // The main process is gone: end what is left of its group, give the pipes a moment.
        ::kill(-pid, SIGKILL);
        drain_until = Clock::now() + std::chrono::milliseconds(500);
      }
    }
    if (exited && drain_until && Clock::now() >= *drain_until) break;

    pollfd fds[2];
    int count = 0;
    if (out_read.fd >= 0) fds[count++] = {out_read.fd, POLLIN, 0};
    if (err_read.fd >= 0) fds[count++] = {err_read.fd, POLLIN, 0};
    if (count == 0) {
      ::usleep(10000);
      continue;
    }
    const int ready = ::poll(fds, count, 50);
    if (ready < 0 && errno != EINTR) break;
    for (int idx = 0; idx < count && ready > 0; ++idx) {
      if ((fds[idx].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      const bool is_out = fds[idx].fd == out_read.fd;
      const ssize_t got = ::read(fds[idx].fd, buffer, sizeof buffer);
      if (got > 0) {
        (is_out ? out : err).append(std::string_view(buffer, static_cast<std::size_t>(got)));
      } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
        (is_out ? out_read : err_read).reset();
      }
    }
  }
  if (!exited) {
    ::kill(-pid, SIGKILL);
    ::waitpid(pid, &status, 0);
  }
  reap_group(pid);
  if (spec.box) remove_box_cgroup(pid);
  outcome.wall_s = std::chrono::duration<double>(Clock::now() - started).count();
  if (WIFEXITED(status)) outcome.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) outcome.term_signal = WTERMSIG(status);
  outcome.stdout_bytes = out.total();
  outcome.stderr_bytes = err.total();
  outcome.stdout_tail = out.take();
  outcome.stderr_tail = err.take();
  return outcome;
}

}  // namespace

void TailBuffer::append(std::string_view bytes) {
  total_ += bytes.size();
  if (bytes.size() >= limit_) {
    data_.assign(bytes.substr(bytes.size() - limit_));
    return;
  }
  data_.append(bytes);
  if (data_.size() > 2 * limit_) TailTrim(data_, limit_);
}

std::string TailBuffer::take() {
  TailTrim(data_, limit_);
  return std::move(data_);
}

bool named_for_a_gone_process(std::string_view name, std::string_view prefix) {
  if (!name.starts_with(prefix)) return false;
  const std::string_view rest = name.substr(prefix.size());
  int pid = 0;
  const auto [end, parsed] = std::from_chars(rest.data(), rest.data() + rest.size(), pid);
  if (parsed != std::errc() || pid <= 0) return false;
  if (end != rest.data() + rest.size() && *end != '-') return false;
  return ::kill(pid, 0) != 0 && errno == ESRCH;
}

std::map<std::string, std::string> current_environment() {
  std::map<std::string, std::string> env;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string_view text = *entry;
    const auto equals = text.find('=');
    if (equals != std::string_view::npos)
      env[std::string(text.substr(0, equals))] = std::string(text.substr(equals + 1));
  }
  for (const char* name : kFolderVariables) {
    const auto found = env.find(name);
    if (found != env.end() && !found->second.empty() &&
        std::filesystem::path(found->second).is_relative()) {
      found->second = std::filesystem::absolute(found->second).lexically_normal().string();
    }
  }
  return env;
}

std::unique_ptr<ProcessLauncher> make_posix_launcher() { return std::make_unique<PosixLauncher>(); }

}  // namespace canrun::process
