// What canrun passes on to the processes it starts: an allow-list of its own environment for
// each kind of process, and never a secret to code a model's repository can steer.
//
// Audiences:
//   - kRun: run.py, the CPU reference, the judge and the stack's probe, code that a stranger's
//     repository steers (its tokenizer and processor, a backend in development, packages learned
//     on top). It gets the locale, PATH and the library path, PYTHONPATH (a backend in
//     development named module:function), the threading, device and compiler variables
//     (OMP_*, KMP_*, MKL_*, CUDA_*, NCCL_*, NEURON_*, TORCH*, PYTORCH_*, TRITON_*), the Hugging
//     Face cache's folders and offline switches, and canrun's own CANRUN_*. HF_HUB_OFFLINE is
//     1 (what a run loads is on disk: a campaign fetched it ahead, `canrun test` runs what is
//     there), HF_HOME is always set (absolute; resolved as huggingface_hub does when canrun's
//     environment leaves it out),
//     so that a run whose HOME is its own folder still finds the cache, and HF_TOKEN_PATH and
//     HF_STORED_TOKENS_PATH name /dev/null, so that the Hub library does not read the token file
//     in it.
//   - kHf: the `hf` CLI, which fetches from the Hub: kRun's list plus HOME, HF_TOKEN,
//     HF_TOKEN_PATH, HF_ENDPOINT and the other HF_* settings, proxies and certificates.
//   - kPip: pip, which installs packages on top of a stack: kRun's list plus HOME, PIP_*,
//     proxies and certificates.
// Every audience also gets the names (or NAME* prefixes) listed in CANRUN_PASS_ENV
// (comma-separated), which `canrun --pass-env` sets. A secret (is_secret_name) never reaches
// kRun, whatever the lists say; CANRUN_PASS_ENV naming one is refused (passed_names).
//
// Thread safety: free functions; environment_for reads the process's environment.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"

namespace canrun::process {

enum class Audience { kRun, kHf, kPip };

//! The variable naming more names to pass on to every audience.
inline constexpr std::string_view kPassEnvVariable = "CANRUN_PASS_ENV";

//! True for a name whose value is a credential: HF_TOKEN and any name containing TOKEN,
//! SECRET, PASSWORD, PASSWD or CREDENTIAL, or ending in _KEY or _KEY_ID (AWS_ACCESS_KEY_ID,
//! AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, OPENAI_API_KEY, ...), in any case.
bool is_secret_name(std::string_view name);

//! True when `name` is `pattern`, or `pattern` ends in '*' and `name` starts with the rest.
bool name_matches(std::string_view name, std::string_view pattern);

//! The entries of a CANRUN_PASS_ENV value: names or NAME* prefixes, comma-separated, blanks
//! ignored. kInvalidArgument names an entry that is not a variable name (letters, digits, '_',
//! an optional final '*') or that a secret matches.
Result<std::vector<std::string>> passed_names(std::string_view value);

//! `from` (an environment, folders made absolute as current_environment does) cut to what
//! `audience` needs, with the fixed values the header names. A malformed CANRUN_PASS_ENV in
//! `from` passes nothing more (canrun refuses it at start, see passed_names).
std::map<std::string, std::string> environment_for(Audience audience,
                                                   const std::map<std::string, std::string>& from);

//! The folder huggingface_hub takes as its home in environment `env`: HF_HOME, else
//! $XDG_CACHE_HOME/huggingface, else ~/.cache/huggingface; empty when none can be told.
std::string hf_home(const std::map<std::string, std::string>& env);

//! environment_for(audience, current_environment()).
std::map<std::string, std::string> environment_for(Audience audience);

//! The temporary folders OwnFolders makes: <system temp>/canrun-scratch-<canrun's pid>-XXXXXX.
inline constexpr std::string_view kScratchPrefix = "canrun-scratch-";

//! Removes the temporary folders in `temp` of canrun processes that are gone (killed before
//! their runs ended, so their OwnFolders could not); OwnFolders::make calls it once per process.
void sweep_own_folders(const std::filesystem::path& temp);

//! A home and a temporary folder of one process's own, named by HOME and TMPDIR in its
//! environment: what it writes there (dot-files, the caches of libraries canrun does not name,
//! scratch files) is not the user's. The home is `folder`/home and stays (beside run.py, for
//! whoever looks into a failure); the temporary folder is a fresh one under the system's, with
//! a short name (a Unix socket's path has at most 107 bytes), removed with this object.
class OwnFolders {
 public:
  //! Creates both and sets HOME and TMPDIR in `env`; kIoError names a folder it cannot create.
  static Result<OwnFolders> make(const std::filesystem::path& folder,
                                 std::map<std::string, std::string>& env);
  OwnFolders(OwnFolders&& other) noexcept : tmp_(std::exchange(other.tmp_, {})) {}
  OwnFolders& operator=(OwnFolders&&) = delete;
  OwnFolders(const OwnFolders&) = delete;
  ~OwnFolders();

 private:
  explicit OwnFolders(std::filesystem::path tmp) : tmp_(std::move(tmp)) {}
  std::filesystem::path tmp_;
};

}  // namespace canrun::process
