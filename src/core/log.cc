#include "core/log.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

namespace canrun::log {
namespace {

std::atomic<Level> current_level{Level::kInfo};
std::mutex write_mutex;

bool use_colour() {
  static const bool colour = ::isatty(STDERR_FILENO) == 1 && std::getenv("NO_COLOR") == nullptr;
  return colour;
}

}  // namespace

void set_level(Level level) { current_level.store(level); }
Level level() { return current_level.load(); }

void write(Level level, std::string_view message) {
  static constexpr std::string_view kNames[] = {"debug", "info", "warning", "error"};
  static constexpr std::string_view kColours[] = {"\033[2m", "", "\033[33m", "\033[31m"};
  const auto index = static_cast<int>(level);
  std::string line = "canrun: ";
  if (level != Level::kInfo) {
    if (use_colour()) line += kColours[index];
    line += kNames[index];
    if (use_colour()) line += "\033[0m";
    line += ": ";
  }
  line += message;
  line += '\n';
  std::lock_guard lock(write_mutex);
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

}  // namespace canrun::log
