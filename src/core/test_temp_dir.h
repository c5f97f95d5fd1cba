// Test helpers: a folder of one test's own under the system's temp folder, empty when made and
// removed with everything in it when destroyed. Its name holds the process id and the running
// test's name, so parallel ctest runs and the tests of one binary never share a folder.
//
// Thread safety: one owner; path() may be read from any thread.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>

namespace canrun::testing {

class TempDir {
 public:
  //! Makes TMP/canrun-<prefix>-<pid>-<suite>.<test>, emptied first if a crashed run left it.
  explicit TempDir(std::string_view prefix) {
    const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = "canrun-" + std::string(prefix) + "-" + std::to_string(::getpid());
    if (test != nullptr) name += std::string("-") + test->test_suite_name() + "." + test->name();
    path_ = std::filesystem::temp_directory_path() / name;
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

//! Writes `bytes` to `path`, making the folders above it.
inline void write_file(const std::filesystem::path& path, std::string_view bytes) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

}  // namespace canrun::testing
