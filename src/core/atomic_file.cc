#include "core/atomic_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

namespace canrun {
namespace {

Error errno_error(std::string_view doing, const std::filesystem::path& path) {
  return io_error(fmt::format("{} {}: {}", doing, path.string(), std::strerror(errno)));
}

Status write_all(int fd, std::string_view bytes, const std::filesystem::path& path) {
  while (!bytes.empty()) {
    const ssize_t written = ::write(fd, bytes.data(), bytes.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return errno_error("cannot write", path);
    }
    bytes.remove_prefix(static_cast<std::size_t>(written));
  }
  return ok_status();
}

std::string temp_suffix() {
  thread_local std::mt19937_64 random{std::random_device{}()};
  return fmt::format(".tmp-{}-{:016x}", ::getpid(), random());
}

}  // namespace

Status write_file_atomically(const std::filesystem::path& path, std::string_view bytes) {
  const std::filesystem::path folder = path.has_parent_path() ? path.parent_path() : ".";
  const std::filesystem::path temp = folder / ("." + path.filename().string() + temp_suffix());
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return errno_error("cannot create", temp);
  Status status = write_all(fd, bytes, temp);
  if (status.ok() && ::fsync(fd) != 0) status = errno_error("cannot fsync", temp);
  if (::close(fd) != 0 && status.ok()) status = errno_error("cannot close", temp);
  if (status.ok() && ::rename(temp.c_str(), path.c_str()) != 0) {
    status = errno_error("cannot rename into place", path);
  }
  if (!status.ok()) {
    ::unlink(temp.c_str());
    return status;
  }
  const int dir_fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
  return ok_status();
}

Result<std::string> read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return errno_error("cannot open", path);
  std::ostringstream content;
  content << in.rdbuf();
  if (in.bad()) return errno_error("cannot read", path);
  return content.str();
}

Result<FileLock> FileLock::acquire(const std::filesystem::path& lock_path) {
  return lock(lock_path, /*wait=*/true);
}

Result<FileLock> FileLock::try_acquire(const std::filesystem::path& lock_path) {
  return lock(lock_path, /*wait=*/false);
}

Result<FileLock> FileLock::lock(const std::filesystem::path& lock_path, bool wait) {
  std::error_code ignored;
  std::filesystem::create_directories(lock_path.parent_path(), ignored);
  const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return errno_error("cannot open lock file", lock_path);
  while (::flock(fd, wait ? LOCK_EX : LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    if (errno == EWOULDBLOCK && !wait) {
      ::close(fd);
      return Error(ErrorCode::kUnavailable,
                   fmt::format("{} is held by another process", lock_path.string()))
          .with_reason(reason::kBusy);
    }
    Error error = errno_error("cannot lock", lock_path);
    ::close(fd);
    return error;
  }
  return FileLock(fd);
}

Status append_line(const std::filesystem::path& path, std::string_view line) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return errno_error("cannot open", path);
  std::string text(line);
  text += '\n';
  const ssize_t written = ::write(fd, text.data(), text.size());
  Status status = written == static_cast<ssize_t>(text.size())
                      ? ok_status()
                      : errno_error("cannot append to", path);
  if (status.ok() && ::fdatasync(fd) != 0) status = errno_error("cannot sync", path);
  ::close(fd);
  return status;
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace canrun
