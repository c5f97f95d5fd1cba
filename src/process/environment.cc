#include "process/environment.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <ranges>

#include "process/process.h"

namespace canrun::process {
namespace {

//! What every audience needs: the locale, where programs and libraries are, the threading,
//! device and compiler settings, the Hugging Face cache's folders and switches, canrun's own.
constexpr std::array kRunNames = {"PATH",
                                  "LD_LIBRARY_PATH",
                                  "LANG",
                                  "LANGUAGE",
                                  "LC_*",
                                  "TZ",
                                  "TERM",
                                  "USER",
                                  "LOGNAME",
                                  "PYTHONPATH",
                                  "PYTHONWARNINGS",
                                  "PYTHONDONTWRITEBYTECODE",
                                  "OMP_*",
                                  "KMP_*",
                                  "MKL_*",
                                  "OPENBLAS_*",
                                  "GOMP_*",
                                  "CUDA_*",
                                  "NVIDIA_*",
                                  "NCCL_*",
                                  "NEURON_*",
                                  "TORCH_*",
                                  "TORCHINDUCTOR_*",
                                  "TORCHDYNAMO_*",
                                  "PYTORCH_*",
                                  "TRITON_*",
                                  "XLA_*",
                                  "HF_HOME",
                                  "HF_HUB_CACHE",
                                  "HUGGINGFACE_HUB_CACHE",
                                  "HF_DATASETS_CACHE",
                                  "TRANSFORMERS_CACHE",
                                  "HF_HUB_OFFLINE",
                                  "TRANSFORMERS_OFFLINE",
                                  "HF_DATASETS_OFFLINE",
                                  "HF_HUB_DISABLE_*",
                                  "XDG_CACHE_HOME",
                                  "CANRUN_*"};

//! What reaching a registry adds: the user's configuration, proxies and certificates.
constexpr std::array kNetworkNames = {"HOME",         "http_proxy",         "https_proxy",
                                      "no_proxy",     "HTTP_PROXY",         "HTTPS_PROXY",
                                      "NO_PROXY",     "ALL_PROXY",          "SSL_CERT_FILE",
                                      "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"};

//! The Hub CLI's own: its token (gated repositories), endpoint and settings.
constexpr std::array kHfNames = {"HF_*", "HUGGING_FACE_HUB_TOKEN"};

//! pip's own settings (index, find-links, cache).
constexpr std::array kPipNames = {"PIP_*", "VIRTUAL_ENV"};

//! The segments of a name that make it a secret wherever they stand.
constexpr std::array kSecretSegments = {"TOKEN",       "TOKENS",    "SECRET", "SECRETS",
                                        "PASSWORD",    "PASSWD",    "APIKEY", "CREDENTIAL",
                                        "CREDENTIALS", "PRIVATEKEY"};

bool matches_any(std::string_view name, const auto& patterns) {
  return std::ranges::any_of(patterns,
                             [&](std::string_view pattern) { return name_matches(name, pattern); });
}

bool is_variable_name(std::string_view name) {
  return !name.empty() && std::isdigit(static_cast<unsigned char>(name.front())) == 0 &&
         std::ranges::all_of(name, [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
         });
}

}  // namespace

std::string hf_home(const std::map<std::string, std::string>& from) {
  const auto get = [&](const char* name) -> std::string {
    const auto found = from.find(name);
    return found == from.end() ? "" : found->second;
  };
  namespace fs = std::filesystem;
  if (const std::string home = get("HF_HOME"); !home.empty()) return home;
  if (const std::string xdg = get("XDG_CACHE_HOME"); !xdg.empty())
    return (fs::path(xdg) / "huggingface").string();
  const std::string user_home = get("HOME");
  if (user_home.empty()) return "";
  return (fs::path(user_home) / ".cache" / "huggingface").string();
}

bool is_secret_name(std::string_view name) {
  std::string upper(name);
  std::ranges::transform(upper, upper.begin(),
                         [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  std::vector<std::string_view> segments;
  for (const auto part : std::views::split(std::string_view(upper), '_'))
    segments.emplace_back(part.begin(), part.end());
  if (std::ranges::any_of(segments, [](std::string_view segment) {
        return std::ranges::find(kSecretSegments, segment) != kSecretSegments.end();
      })) {
    return true;
  }
  const auto last = [&](std::size_t from_end) {
    return segments.size() > from_end ? segments[segments.size() - 1 - from_end]
                                      : std::string_view();
  };
  return last(0) == "KEY" || (last(0) == "ID" && last(1) == "KEY");
}

bool name_matches(std::string_view name, std::string_view pattern) {
  if (pattern.ends_with('*')) return name.starts_with(pattern.substr(0, pattern.size() - 1));
  return name == pattern;
}

Result<std::vector<std::string>> passed_names(std::string_view value) {
  std::vector<std::string> names;
  for (const auto part : std::views::split(value, ',')) {
    std::string_view entry(part.begin(), part.end());
    while (!entry.empty() && std::isspace(static_cast<unsigned char>(entry.front())) != 0)
      entry.remove_prefix(1);
    while (!entry.empty() && std::isspace(static_cast<unsigned char>(entry.back())) != 0)
      entry.remove_suffix(1);
    if (entry.empty()) continue;
    const std::string_view name = entry.ends_with('*') ? entry.substr(0, entry.size() - 1) : entry;
    if (!is_variable_name(name)) {
      return invalid_argument(fmt::format(
          "{}: \"{}\" is not a variable name (letters, digits and _, or a prefix ending in *)",
          kPassEnvVariable, entry));
    }
    if (is_secret_name(name)) {
      return invalid_argument(fmt::format(
          "{}: \"{}\" names a secret, which never reaches a run (run.py, the reference, the "
          "judge); tools that fetch get the credentials they need on their own",
          kPassEnvVariable, entry));
    }
    names.emplace_back(entry);
  }
  return names;
}

std::map<std::string, std::string> environment_for(Audience audience,
                                                   const std::map<std::string, std::string>& from) {
  std::vector<std::string> passed;
  if (const auto found = from.find(std::string(kPassEnvVariable)); found != from.end()) {
    if (auto names = passed_names(found->second); names.ok()) passed = std::move(*names);
  }
  std::map<std::string, std::string> env;
  for (const auto& [name, value] : from) {
    bool keep = matches_any(name, kRunNames) || matches_any(name, passed);
    if (audience != Audience::kRun) keep = keep || matches_any(name, kNetworkNames);
    if (audience == Audience::kHf) keep = keep || matches_any(name, kHfNames);
    if (audience == Audience::kPip) keep = keep || matches_any(name, kPipNames);
    if (audience == Audience::kRun && is_secret_name(name)) keep = false;
    if (keep) env.emplace(name, value);
  }
  if (audience == Audience::kRun) {
    if (const std::string home = hf_home(from); !home.empty()) env["HF_HOME"] = home;
    env["HF_HUB_OFFLINE"] = "1";  // what it loads is on disk: canrun fetched it, or the user
    env["HF_TOKEN_PATH"] = "/dev/null";
    env["HF_STORED_TOKENS_PATH"] = "/dev/null";
  }
  return env;
}

std::map<std::string, std::string> environment_for(Audience audience) {
  return environment_for(audience, current_environment());
}

Result<OwnFolders> OwnFolders::make(const std::filesystem::path& folder,
                                    std::map<std::string, std::string>& env) {
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::path home = fs::absolute(folder / "home");
  fs::create_directories(home, error);
  if (error) return io_error(fmt::format("cannot create {}: {}", home.string(), error.message()));
  static std::once_flag swept;  // what a killed canrun left, once per process
  std::call_once(swept, [] { sweep_own_folders(std::filesystem::temp_directory_path()); });
  std::string pattern =
      (fs::temp_directory_path(error) / fmt::format("{}{}-XXXXXX", kScratchPrefix, ::getpid()))
          .string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    return io_error(
        fmt::format("cannot create a temporary folder {}: {}", pattern, std::strerror(errno)));
  }
  env["HOME"] = home.string();
  env["TMPDIR"] = pattern;
  return OwnFolders(fs::path(pattern));
}

void sweep_own_folders(const std::filesystem::path& temp) {
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(temp, error)) {
    if (!named_for_a_gone_process(entry.path().filename().string(), kScratchPrefix)) continue;
    std::error_code ignored;
    std::filesystem::remove_all(entry.path(), ignored);
  }
}

OwnFolders::~OwnFolders() {
  if (tmp_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(tmp_, ignored);
}

}  // namespace canrun::process
