#include "core/cache_dir.h"

#include <cstdlib>

namespace canrun {

std::filesystem::path default_cache_dir() {
  if (const char* env = std::getenv("CANRUN_CACHE"); env != nullptr && *env != '\0') return env;
  if (const char* env = std::getenv("XDG_CACHE_HOME"); env != nullptr && *env != '\0') {
    return std::filesystem::path(env) / "canrun";
  }
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home != nullptr ? home : "/tmp") / ".cache" / "canrun";
}

}  // namespace canrun
