#include "core/scratch_dir.h"

#include <fmt/format.h>
#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

namespace canrun {

namespace fs = std::filesystem;

Result<ScratchDir> ScratchDir::make_in(const fs::path& parent, std::string_view prefix) {
  std::error_code error;
  fs::create_directories(parent, error);
  if (error) {
    return io_error(fmt::format("cannot create folder {}: {}", parent.string(), error.message()));
  }
  std::string pattern = (parent / (std::string(prefix) + "XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    return io_error(fmt::format("cannot create a scratch folder in {}: {}", parent.string(),
                                std::strerror(errno)));
  }
  return ScratchDir(pattern);
}

ScratchDir::ScratchDir(ScratchDir&& other) noexcept : path_(std::exchange(other.path_, {})) {}

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  if (!path_.empty()) fs::remove_all(path_, ignored);
}

}  // namespace canrun
