#include "process/box.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/capability.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>

#include "core/log.h"
#include "process/environment.h"
#include "process/process.h"

namespace canrun::process {
namespace {

namespace fs = std::filesystem;

constexpr int kSetupFailed = 125;

//! mount_setattr(2)'s argument (linux/mount.h, which clashes with glibc's sys/mount.h).
struct MountAttributes {
  std::uint64_t attr_set = 0;
  std::uint64_t attr_clr = 0;
  std::uint64_t propagation = 0;
  std::uint64_t userns_fd = 0;
};
constexpr std::uint64_t kMountReadOnly = 0x00000001;  // MOUNT_ATTR_RDONLY
constexpr unsigned kAtRecursive = 0x8000;             // AT_RECURSIVE

//! Says what failed, with errno's text, and leaves the helper (nothing was run).
[[noreturn]] void fail(std::string_view what) {
  const std::string text = fmt::format("canrun box: {}: {}\n", what, std::strerror(errno));
  (void)!::write(STDERR_FILENO, text.data(), text.size());
  ::_exit(kSetupFailed);
}

bool write_text(const fs::path& path, std::string_view text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  return written;
}

bool set_mount_attributes(const fs::path& path, std::uint64_t set, std::uint64_t clear) {
  MountAttributes attributes;
  attributes.attr_set = set;
  attributes.attr_clr = clear;
  return ::syscall(SYS_mount_setattr, AT_FDCWD, path.c_str(), kAtRecursive, &attributes,
                   sizeof attributes) == 0;
}

//! The folder of this process's pids cgroup: from /proc/self/cgroup and the mount of the pids
//! hierarchy (cgroup v1) or of the unified one (v2) in /proc/self/mountinfo.
std::optional<fs::path> pids_cgroup_folder() {
  std::ifstream cgroups("/proc/self/cgroup");
  std::string line;
  std::optional<std::string> v1_path, v2_path;
  while (std::getline(cgroups, line)) {
    const auto first = line.find(':');
    const auto second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string path = line.substr(second + 1);
    std::stringstream list(controllers);
    for (std::string controller; std::getline(list, controller, ',');)
      if (controller == "pids") v1_path = path;
    if (line.starts_with("0::")) v2_path = path;
  }
  std::ifstream mounts("/proc/self/mountinfo");
  while (std::getline(mounts, line)) {
    std::stringstream fields(line);
    std::string id, parent, device, root, point, word;
    fields >> id >> parent >> device >> root >> point;
    while (fields >> word && word != "-") {
    }
    std::string type, source, options;
    fields >> type >> source >> options;
    const bool v1 =
        type == "cgroup" && v1_path && ("," + options + ",").find(",pids,") != std::string::npos;
    const bool v2 = type == "cgroup2" && v2_path && !v1_path;
    if (!v1 && !v2) continue;
    std::string path = v1 ? *v1_path : *v2_path;
    if (root != "/" && path.starts_with(root)) path = path.substr(root.size());
    return fs::path(point) / fs::path(path).relative_path();
  }
  return std::nullopt;
}

constexpr std::string_view kCgroupPrefix = "canrun-box-";

std::string box_cgroup_name(int helper_pid) {
  return fmt::format("{}{}", kCgroupPrefix, helper_pid);
}

//! Makes the helper's own pids cgroup, capped at `limit` tasks, and moves the helper into it
//! (its descendants follow). False when the cgroup file system does not let it.
bool enter_pids_cgroup(int limit) {
  const auto parent = pids_cgroup_folder();
  if (!parent) return false;
  const fs::path folder = *parent / box_cgroup_name(::getpid());
  if (::mkdir(folder.c_str(), 0755) != 0) return false;
  if (write_text(folder / "pids.max", std::to_string(limit)) &&
      write_text(folder / "cgroup.procs", std::to_string(::getpid()))) {
    return true;
  }
  ::rmdir(folder.c_str());
  return false;
}

//! Takes the helper out of its pids cgroup (back into the one it came from) and removes it.
void leave_pids_cgroup() {
  const auto parent = pids_cgroup_folder();  // the box's own, now
  if (!parent) return;
  const fs::path folder = *parent;
  if (!write_text(folder.parent_path() / "cgroup.procs", std::to_string(::getpid()))) return;
  for (int attempt = 0; attempt < 50 && ::rmdir(folder.c_str()) != 0 && errno == EBUSY; ++attempt)
    ::usleep(10000);
}

//! Removes the pids cgroups of helpers that are gone (killed before they could remove theirs).
void sweep_box_cgroups() {
  const auto parent = pids_cgroup_folder();
  if (!parent) return;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(*parent, error)) {
    if (named_for_a_gone_process(entry.path().filename().string(), kCgroupPrefix))
      ::rmdir(entry.path().c_str());
  }
}

void set_limit(int resource, rlim_t value) {
  rlimit limit{};
  ::getrlimit(resource, &limit);
  if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < value) value = limit.rlim_max;
  limit = {value, value};
  if (::setrlimit(resource, &limit) != 0) fail(fmt::format("setrlimit({})", resource));
}

void bring_loopback_up() {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) fail("a socket to bring the loopback interface up");
  ifreq request{};
  std::strncpy(request.ifr_name, "lo", IFNAMSIZ - 1);
  if (::ioctl(fd, SIOCGIFFLAGS, &request) != 0) fail("reading the loopback interface's flags");
  request.ifr_flags = static_cast<short>(request.ifr_flags | IFF_UP | IFF_RUNNING);
  if (::ioctl(fd, SIOCSIFFLAGS, &request) != 0) fail("bringing the loopback interface up");
  ::close(fd);
}

//! Every mount read-only but the writable folders; the hidden files masked; a fresh /dev/shm.
void set_up_mounts(const BoxSpec& box) {
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    fail("making the mounts private");
  for (const fs::path& path : box.hidden) {
    std::error_code error;
    const auto status = fs::symlink_status(path, error);
    if (fs::is_directory(status)) {
      if (::mount("tmpfs", path.c_str(), "tmpfs", MS_NOSUID | MS_NODEV | MS_RDONLY, "size=4k") != 0)
        fail(fmt::format("hiding {}", path.string()));
    } else if (fs::is_regular_file(status)) {
      if (::mount("/dev/null", path.c_str(), nullptr, MS_BIND, nullptr) != 0)
        fail(fmt::format("hiding {}", path.string()));
    }
  }
  std::vector<fs::path> writable;
  for (const fs::path& folder : box.writable) {
    std::error_code error;
    if (!fs::is_directory(folder, error)) continue;
    if (::mount(folder.c_str(), folder.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0)
      fail(fmt::format("binding {}", folder.string()));
    writable.push_back(folder);
  }
  if (!set_mount_attributes("/", kMountReadOnly, 0)) fail("making the mounts read-only");
  for (const fs::path& folder : writable) {
    if (!set_mount_attributes(folder, 0, kMountReadOnly))
      fail(fmt::format("making {} writable", folder.string()));
  }
  std::error_code error;
  if (fs::is_directory("/dev/shm", error) &&
      ::mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=1g") != 0) {
    fail("a fresh /dev/shm");
  }
}

//! No capability left (the bounding set included), no way to gain one back.
void drop_privileges() {
  int last = CAP_LAST_CAP;
  if (std::ifstream in("/proc/sys/kernel/cap_last_cap"); in) in >> last;
  for (int cap = 0; cap <= last; ++cap) {
    if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL)
      fail("dropping the capability bounding set");
  }
  ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (::syscall(SYS_capset, &header, data) != 0) fail("dropping capabilities");
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail("no_new_privs");
  ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

volatile sig_atomic_t g_command_pid = 0;

//! The helper's executable (set_box_helper), written once at start, before any thread.
fs::path& box_helper() {
  static fs::path helper;
  return helper;
}

void forward_signal(int signal) {
  if (g_command_pid > 0) ::kill(g_command_pid, signal);
}

//! The box's init (pid 1 of its PID namespace): runs the command, reaps every process it
//! adopts, and leaves when the command has ended, passing its wait status on through `report`
//! (its leaving ends every process still in the box).
[[noreturn]] void run_init(const std::vector<std::string>& command, int report) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  // Its own /proc, showing the box's processes only; where the OS refuses, the outer one.
  (void)::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr);
  drop_privileges();
  std::vector<char*> argv;
  for (const std::string& arg : command) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  const pid_t child = ::fork();
  if (child < 0) fail("starting the command");
  if (child == 0) {
    ::close(report);
    ::execv(argv.front(), argv.data());
    fail(fmt::format("running {}", command.front()));
  }
  g_command_pid = child;
  struct sigaction forward {};
  forward.sa_handler = forward_signal;
  for (const int signal : {SIGTERM, SIGINT, SIGHUP}) ::sigaction(signal, &forward, nullptr);
  for (;;) {
    int status = 0;
    const pid_t ended = ::waitpid(-1, &status, 0);
    if (ended == child) {
      (void)!::write(report, &status, sizeof status);
      ::_exit(0);
    }
    if (ended < 0 && errno != EINTR) ::_exit(kSetupFailed);
  }
}

struct BoxArgs {
  BoxSpec box;
  bool probe = false;
  std::vector<std::string> command;
};

std::optional<BoxArgs> parse_box_args(const std::vector<std::string>& args) {
  BoxArgs parsed;
  std::size_t at = 0;
  const auto number = [](const std::string& text) -> std::optional<int> {
    int value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || value <= 0) return std::nullopt;
    return value;
  };
  for (; at < args.size() && args[at] != "--"; ++at) {
    const std::string& option = args[at];
    if (option == "--probe") {
      parsed.probe = true;
      continue;
    }
    if (at + 1 >= args.size()) return std::nullopt;
    const std::string& value = args[++at];
    if (option == "--rw") {
      parsed.box.writable.emplace_back(value);
    } else if (option == "--hide") {
      parsed.box.hidden.emplace_back(value);
    } else if (option == "--pids" && number(value)) {
      parsed.box.max_processes = *number(value);
    } else if (option == "--nofile" && number(value)) {
      parsed.box.max_open_files = *number(value);
    } else {
      return std::nullopt;
    }
  }
  if (at + 1 >= args.size()) return std::nullopt;
  parsed.command.assign(args.begin() + static_cast<std::ptrdiff_t>(at) + 1, args.end());
  if (parsed.command.front().find('/') == std::string::npos) return std::nullopt;
  return parsed;
}

//! Leaves as `status` says a process ended: its exit status, or killed by its signal.
int exit_as(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  const int signal = WIFSIGNALED(status) ? WTERMSIG(status) : SIGKILL;
  ::signal(signal, SIG_DFL);
  ::raise(signal);
  return 128 + signal;
}

//! Enters the namespaces, sets the box up, runs the command under the box's init; returns (or
//! is killed) as the command ended.
int run_boxed(const BoxArgs& parsed, bool pids) {
  const uid_t uid = ::getuid();
  const gid_t gid = ::getgid();
  if (::unshare(CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWNS | CLONE_NEWPID) != 0)
    fail("new user, network, mount and PID namespaces");
  // After the user namespace, so that it counts the box's processes only (root: no effect).
  set_limit(RLIMIT_NPROC, static_cast<rlim_t>(parsed.box.max_processes));
  if (!write_text("/proc/self/setgroups", "deny") ||
      !write_text("/proc/self/uid_map", fmt::format("0 {} 1", uid)) ||
      !write_text("/proc/self/gid_map", fmt::format("0 {} 1", gid))) {
    fail("mapping the caller's user into the box");
  }
  bring_loopback_up();
  set_up_mounts(parsed.box);
  // The working folder again, through the new mounts: the one held still names the old,
  // now read-only, mount of the run folder.
  const fs::path here = fs::current_path();
  if (::chdir(here.c_str()) != 0) fail(fmt::format("entering {}", here.string()));
  if (parsed.probe) {
    const std::string parts = fmt::format("user,net,mount,pid{}\n", pids ? ",pids" : "");
    (void)!::write(STDOUT_FILENO, parts.data(), parts.size());
  }
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) fail("a pipe");
  const pid_t init = ::fork();
  if (init < 0) fail("starting the box's init");
  if (init == 0) {
    ::close(report[0]);
    run_init(parsed.command, report[1]);
  }
  ::close(report[1]);
  // Its signals reach the command through the init (the process group's do too).
  for (const int signal : {SIGTERM, SIGINT, SIGHUP}) ::signal(signal, SIG_IGN);
  int status = 0;
  while (::waitpid(init, &status, 0) < 0 && errno == EINTR) {
  }
  int command_status = 0;
  if (::read(report[0], &command_status, sizeof command_status) != sizeof command_status) {
    // The init itself was killed (by the time limit's SIGKILL to the group, or canrun's own).
    command_status = status;
  }
  return exit_as(command_status);
}

std::string probe_isolation() {
  if (box_helper().empty()) return "none";
  if (const char* off = std::getenv(kIsolationVariable.data());
      off != nullptr && std::string_view(off) == "none") {
    log::info(
        "runs are not boxed (isolation \"none\", as asked); secrets are still kept from "
        "them");
    return "none";
  }
  sweep_box_cgroups();
  BoxSpec box = box_for({});
  std::vector<std::string> argv = boxed_argv(box, {"/bin/true"});
  argv.insert(argv.begin() + 2, "--probe");
  ProcessSpec spec;
  spec.argv = std::move(argv);
  spec.env = {{"PATH", "/usr/bin:/bin"}};
  spec.timeout = std::chrono::seconds(30);
  auto outcome = make_posix_launcher()->run(spec);
  if (outcome.ok()) remove_box_cgroup(outcome->pgid);
  std::string parts = outcome.ok() ? outcome->stdout_tail : "";
  while (!parts.empty() && parts.back() == '\n') parts.pop_back();
  if (!outcome.ok() || outcome->exit_code != 0 || parts.empty()) {
    std::string why = outcome.ok() ? outcome->stderr_tail : outcome.error().message();
    while (!why.empty() && why.back() == '\n') why.pop_back();
    log::warning(
        "runs are not boxed on this machine (isolation \"none\"; secrets are still "
        "kept from them): {}",
        why.empty() ? "the box's helper failed" : why);
    return "none";
  }
  log::info("runs are boxed (isolation \"{}\")", parts);
  return parts;
}

}  // namespace

void set_box_helper(fs::path executable) { box_helper() = std::move(executable); }

const std::string& isolation() {
  static std::once_flag once;
  static std::string parts;
  std::call_once(once, [] { parts = probe_isolation(); });
  return parts;
}

std::vector<fs::path> credential_paths(const std::map<std::string, std::string>& env) {
  std::vector<fs::path> paths;
  if (const std::string hub = hf_home(env); !hub.empty()) {
    paths.push_back(fs::path(hub) / "token");
    paths.push_back(fs::path(hub) / "stored_tokens");
  }
  const auto home = env.find("HOME");
  if (home != env.end() && !home->second.empty()) {
    for (const char* name : {".aws", ".ssh", ".config/gcloud", ".azure", ".kube",
                             ".docker/config.json", ".netrc", ".git-credentials", ".pypirc"}) {
      paths.push_back(fs::path(home->second) / name);
    }
  }
  return paths;
}

std::optional<BoxSpec> box_if_isolated(std::vector<fs::path> writable) {
  if (isolation() == "none") return std::nullopt;
  return box_for(std::move(writable));
}

BoxSpec box_for(std::vector<fs::path> writable) {
  BoxSpec box;
  box.writable = std::move(writable);
  box.hidden = credential_paths(current_environment());
  if (const char* text = std::getenv(kMaxProcessesVariable.data()); text != nullptr) {
    int value = 0;
    const std::string_view view(text);
    const auto [end, error] = std::from_chars(view.data(), view.data() + view.size(), value);
    if (error == std::errc() && end == view.data() + view.size() && value > 0)
      box.max_processes = value;
  }
  return box;
}

std::vector<std::string> boxed_argv(const BoxSpec& box, const std::vector<std::string>& argv) {
  std::vector<std::string> boxed = {box_helper().string(), std::string(kBoxCommand)};
  for (const fs::path& folder : box.writable) boxed.insert(boxed.end(), {"--rw", folder.string()});
  for (const fs::path& file : box.hidden) boxed.insert(boxed.end(), {"--hide", file.string()});
  boxed.insert(boxed.end(), {"--pids", std::to_string(box.max_processes), "--nofile",
                             std::to_string(box.max_open_files), "--"});
  boxed.insert(boxed.end(), argv.begin(), argv.end());
  return boxed;
}

int box_main(const std::vector<std::string>& args) {
  const auto parsed = parse_box_args(args);
  if (!parsed) {
    const std::string usage = fmt::format(
        "canrun box: usage: canrun {} [--rw DIR]... [--hide FILE]... [--pids N] "
        "[--nofile N] [--probe] -- /PATH/TO/COMMAND [ARG]...\n",
        kBoxCommand);
    (void)!::write(STDERR_FILENO, usage.data(), usage.size());
    return kSetupFailed;
  }
  // The pids cgroup (+3: this helper, the one that sets the box up, the box's init) before
  // anything becomes read-only; the limits, inherited by all that follows.
  const bool pids = enter_pids_cgroup(parsed->box.max_processes + 3);
  set_limit(RLIMIT_CORE, 0);
  set_limit(RLIMIT_NOFILE, static_cast<rlim_t>(parsed->box.max_open_files));
  // canrun's libraries start threads as they load (Arrow's allocator), and only a
  // single-threaded process may enter a user namespace: a child of this one sets the box up.
  const pid_t setup = ::fork();
  if (setup < 0) fail("starting the box's set-up");
  if (setup == 0) ::_exit(run_boxed(*parsed, pids));
  for (const int signal : {SIGTERM, SIGINT, SIGHUP}) ::signal(signal, SIG_IGN);
  int status = 0;
  while (::waitpid(setup, &status, 0) < 0 && errno == EINTR) {
  }
  if (pids) leave_pids_cgroup();  // its box is gone: nothing else is in it
  return exit_as(status);
}

void remove_box_cgroup(int helper_pid) {
  if (helper_pid <= 0) return;
  const auto parent = pids_cgroup_folder();
  if (!parent) return;
  const fs::path folder = *parent / box_cgroup_name(helper_pid);
  // Its last tasks may still be leaving: a few tries, 10 ms apart.
  for (int attempt = 0; attempt < 50 && ::rmdir(folder.c_str()) != 0 && errno == EBUSY; ++attempt)
    ::usleep(10000);
}

}  // namespace canrun::process
