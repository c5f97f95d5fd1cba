// The box a run runs in (SPEC.md's glossary, "isolation"), where the OS allows one: canrun
// starts itself as a small helper (`canrun __box ... -- COMMAND`, hidden from --help), which
// sets the box up and then runs COMMAND in it:
//   - a user namespace (its root is the caller, mapped), so that what follows needs no
//     privilege;
//   - a network namespace with only the loopback interface, up: a sharded run's ranks talk
//     over 127.0.0.1, nothing leaves the box;
//   - a mount namespace in which every mount is read-only except the folders the box is given
//     (the run folder, its temporary folder, the compile cache), with a fresh tmpfs on
//     /dev/shm, and the credentials it hides (credential_paths: the Hub's token file, ~/.aws,
//     ~/.ssh, ...) masked by an empty file or folder;
//   - a PID namespace: the helper's child is its init, which reaps what it adopts and, on
//     leaving, takes every process of the box with it, so none outlives the run;
//   - a pids cgroup of its own (when the cgroup file system lets canrun make one) capping its
//     tasks, processes and threads alike, which binds root too; else RLIMIT_NPROC, which binds
//     any user but root;
//   - no core dumps, open files bounded, no_new_privs, and every capability dropped (the
//     bounding set too), so the box cannot be undone from inside.
// isolation() probes once per canrun process whether this machine allows it (the helper sets
// a box up around `true`), and says what the box holds: "user,net,mount,pid,pids" (a part
// left out where it was not available), or "none" when the OS allows no box at all or
// CANRUN_ISOLATION=none turned it off (`canrun --isolation none`). With "none" a run goes on
// as before the box, with the allow-listed environment (process/environment.h) still.
//
// Thread safety: isolation() is safe from any thread; box_main runs in the helper process.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace canrun::process {

//! The variables that set the box from outside: CANRUN_ISOLATION=none turns it off;
//! CANRUN_MAX_PROCESSES caps its tasks (processes and threads), kDefaultMaxProcesses if unset.
inline constexpr std::string_view kIsolationVariable = "CANRUN_ISOLATION";
inline constexpr std::string_view kMaxProcessesVariable = "CANRUN_MAX_PROCESSES";
inline constexpr int kDefaultMaxProcesses = 4096;

//! The hidden command that runs a command in a box.
inline constexpr std::string_view kBoxCommand = "__box";

struct BoxSpec {
  std::vector<std::filesystem::path> writable;  //!< folders left writable (that exist)
  //! masked when they exist: a file by an empty one, a folder by an empty read-only one
  std::vector<std::filesystem::path> hidden;
  int max_processes = kDefaultMaxProcesses;  //!< tasks: processes and threads
  int max_open_files = 65536;
};

//! Names the executable that serves as the box's helper: canrun's entry point names itself
//! (/proc/self/exe) before anything else. A process that names none (a unit test) boxes
//! nothing: its isolation() is "none".
void set_box_helper(std::filesystem::path executable);

//! What a box holds on this machine ("user,net,mount,pid,pids"), or "none"; probed once.
const std::string& isolation();

//! Where credentials lie that a box hides: the Hub's token files (in HF_HOME, resolved as
//! huggingface_hub does) and, in the user's home, .aws, .ssh, .config/gcloud, .azure, .kube,
//! .docker/config.json, .netrc, .git-credentials and .pypirc.
std::vector<std::filesystem::path> credential_paths(const std::map<std::string, std::string>& env);

//! The box canrun's settings give (CANRUN_MAX_PROCESSES) around these writable folders, hiding
//! the credential_paths of canrun's environment.
BoxSpec box_for(std::vector<std::filesystem::path> writable);

//! box_for(writable) where runs are boxed (isolation() is not "none"), else none.
std::optional<BoxSpec> box_if_isolated(std::vector<std::filesystem::path> writable);

//! The command line that runs `argv` (argv[0] a path) in a box, by the helper set_box_helper
//! named.
std::vector<std::string> boxed_argv(const BoxSpec& box, const std::vector<std::string>& argv);

//! The helper: `args` are what follows kBoxCommand on its command line. Sets the box up and
//! runs the command, then exits as it did (its exit status, or killed by its signal). Returns
//! only on a bad command line or a failed set-up, with the exit status to leave with (125),
//! having said why on stderr.
int box_main(const std::vector<std::string>& args);

//! Removes the pids cgroup a helper of process `helper_pid` made, should it have been killed
//! before it could remove it itself (canrun calls it after each boxed run, and isolation()'s
//! probe removes those of every helper that is gone); nothing when there is none.
void remove_box_cgroup(int helper_pid);

}  // namespace canrun::process
