// Logging to stderr with levels. The CLI sets the level once from -v / --quiet; every stage
// logs through these functions and never writes diagnostics to stdout (stdout is for results
// and --json output).
//
// Thread safety: all functions may be called from any thread; each message is written whole.
#pragma once

#include <fmt/format.h>

#include <string_view>

namespace canrun::log {

enum class Level { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

void set_level(Level level);
Level level();

//! Writes "canrun: <level>: message" to stderr, coloured on a terminal unless NO_COLOR is set.
void write(Level level, std::string_view message);

template <typename... Args>
void debug(fmt::format_string<Args...> format, Args&&... args) {
  if (level() <= Level::kDebug)
    write(Level::kDebug, fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
void info(fmt::format_string<Args...> format, Args&&... args) {
  if (level() <= Level::kInfo)
    write(Level::kInfo, fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
void warning(fmt::format_string<Args...> format, Args&&... args) {
  if (level() <= Level::kWarning) {
    write(Level::kWarning, fmt::format(format, std::forward<Args>(args)...));
  }
}
template <typename... Args>
void error(fmt::format_string<Args...> format, Args&&... args) {
  write(Level::kError, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace canrun::log
