// Crash-safe file replacement and inter-process locks: the dataset, and later the campaign
// journal, write through these so that a reader never sees half a file and two writers never
// lose each other's update.
//
// Thread safety: free functions; a FileLock is owned by one thread at a time.
#pragma once

#include <filesystem>
#include <string_view>

#include "core/result.h"

namespace canrun {

//! Replaces `path` with `bytes`: writes a hidden temp file in the same folder, fsyncs it,
//! renames it over `path` and fsyncs the folder. On any error the old file is left as it was
//! and the temp file removed.
Status write_file_atomically(const std::filesystem::path& path, std::string_view bytes);

//! Reads a whole file.
Result<std::string> read_file(const std::filesystem::path& path);

//! Appends `line` and a newline in one write(2) with O_APPEND, then syncs: a journal line is
//! there whole after a crash, or (at worst, the last one) cut short, which readers skip.
Status append_line(const std::filesystem::path& path, std::string_view line);

//! An exclusive flock(2) on a lock file, released when destroyed (or when the process dies).
class FileLock {
 public:
  //! Blocks until the lock is held; creates the lock file and its folder if needed.
  static Result<FileLock> acquire(const std::filesystem::path& lock_path);
  //! The lock if no one else holds it now; kUnavailable with reason kBusy when someone does.
  static Result<FileLock> try_acquire(const std::filesystem::path& lock_path);

  FileLock(FileLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  FileLock& operator=(FileLock&&) = delete;
  FileLock(const FileLock&) = delete;
  ~FileLock();

 private:
  explicit FileLock(int fd) : fd_(fd) {}
  static Result<FileLock> lock(const std::filesystem::path& lock_path, bool wait);
  int fd_;
};

}  // namespace canrun
