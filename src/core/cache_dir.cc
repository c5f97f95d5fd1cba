#include "core/cache_dir.h"

#include <fmt/format.h>

#include <cstdlib>

namespace canrun {

namespace fs = std::filesystem;

fs::path default_cache_dir() {
  if (const char* env = std::getenv("CANRUN_CACHE"); env != nullptr && *env != '\0') return env;
  if (const char* env = std::getenv("XDG_CACHE_HOME"); env != nullptr && *env != '\0') {
    return fs::path(env) / "canrun";
  }
  const char* home = std::getenv("HOME");
  return fs::path(home != nullptr ? home : "/tmp") / ".cache" / "canrun";
}

fs::path default_rankings_dir() {
  if (const char* env = std::getenv("CANRUN_RANKINGS_DIR"); env != nullptr && *env != '\0') {
    return env;
  }
  return default_cache_dir() / "rankings";
}

fs::path executable_dir() {
  std::error_code error;
  const fs::path exe = fs::read_symlink("/proc/self/exe", error);
  return error ? fs::current_path() : exe.parent_path();
}

std::optional<fs::path> shipped_dir(std::string_view name) {
  const fs::path prefix = executable_dir().parent_path();
  for (const fs::path& candidate : {prefix / name, prefix / "share" / "canrun" / name}) {
    std::error_code error;
    if (fs::is_directory(candidate, error)) return candidate;
  }
  return std::nullopt;
}

fs::path shipped_file(std::string_view folder, std::string_view name) {
  return shipped_dir(folder).value_or(fs::path(folder)) / name;
}

Result<fs::path> given_file(std::string_view option, std::string_view given) {
  std::error_code error;
  if (!fs::exists(given, error)) {
    return not_found(fmt::format("{} {}: no such file (from the working folder {})", option, given,
                                 fs::current_path(error).string()));
  }
  return fs::path(given);
}

Result<fs::path> given_or_shipped(std::string_view option, std::string_view given,
                                  std::string_view folder, std::string_view name) {
  if (given.empty()) return shipped_file(folder, name);
  return given_file(option, given);
}

}  // namespace canrun
