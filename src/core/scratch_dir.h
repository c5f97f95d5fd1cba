// ScratchDir: a folder of one's own for intermediate files (a plan to filter, a download to
// check before it is moved into place), removed with everything in it when destroyed.
//
// Thread safety: one owner; path() may be read from any thread.
#pragma once

#include <filesystem>
#include <string_view>

#include "core/result.h"

namespace canrun {

class ScratchDir {
 public:
  //! Makes a new folder in `parent` (created if missing) named `prefix` and six random
  //! characters (mkdtemp). In the folder of the files it will be moved beside, a rename out of
  //! it stays on one file system and is atomic.
  static Result<ScratchDir> make_in(const std::filesystem::path& parent, std::string_view prefix);

  ScratchDir(ScratchDir&& other) noexcept;
  ScratchDir& operator=(ScratchDir&&) = delete;
  ScratchDir(const ScratchDir&) = delete;
  ~ScratchDir();

  const std::filesystem::path& path() const { return path_; }

 private:
  explicit ScratchDir(std::filesystem::path path) : path_(std::move(path)) {}
  std::filesystem::path path_;
};

}  // namespace canrun
