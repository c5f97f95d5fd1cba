#include "serve/body_files.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/log.h"

namespace canrun::serve {
namespace {

Error system_error(std::string_view call) {
  return io_error(fmt::format("body file: {} failed: {}", call, std::strerror(errno)));
}

}  // namespace

std::filesystem::path default_body_file_directory() {
  std::error_code error;
  auto directory = std::filesystem::temp_directory_path(error);
  return error ? std::filesystem::path() : directory;
}

Result<std::shared_ptr<const BodyFile>> BodyFile::filled(int fd, std::string_view bytes,
                                                         bool seal) {
  // Owned from here on, so every early return closes it.
  std::shared_ptr<const BodyFile> file(new BodyFile(fd, bytes.size()));
  std::size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t count = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (count < 0 && errno == EINTR) continue;
    if (count <= 0) return system_error("write");
    written += static_cast<std::size_t>(count);
  }
  if (seal && fcntl(fd, F_ADD_SEALS, F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)) {
    return system_error("fcntl(F_ADD_SEALS)");
  }
  return file;
}

Result<std::shared_ptr<const BodyFile>> BodyFile::create(std::string_view bytes,
                                                         const std::filesystem::path& directory) {
  if (!directory.empty()) {
    if (const int fd = ::open(directory.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600); fd >= 0) {
      if (auto file = filled(fd, bytes, /*seal=*/false); file.ok()) return file;
    }
  }
  // Sealed: nothing can change the pages a send has handed to the kernel.
  const int fd = memfd_create("canrun-body", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return system_error("memfd_create");
  return filled(fd, bytes, /*seal=*/true);
}

BodyFile::~BodyFile() { ::close(fd_); }

std::shared_ptr<const BodyFile> BodyFiles::file_for(
    const std::shared_ptr<const std::string>& body) {
  if (!body || body->size() < options_.min_bytes) return nullptr;
  std::lock_guard lock(mutex_);
  auto found = seen_.find(body.get());
  // The same object, not a new body at a freed one's address: the same owner.
  const bool same = found != seen_.end() && !found->second.body.owner_before(body) &&
                    !body.owner_before(found->second.body);
  if (!same) {
    if (found != seen_.end()) {
      if (found->second.file) total_bytes_ -= found->second.file->size();
      seen_.erase(found);
    }
    if (seen_.size() >= next_sweep_) {
      drop_gone();
      next_sweep_ = std::max<std::size_t>(64, 2 * seen_.size());
    }
    seen_.emplace(body.get(), Seen{body, nullptr, false});
    return nullptr;
  }
  if (found->second.file || found->second.failed) return found->second.file;
  // The second send: worth a file, if there is room for it. Tried once: a body is kept for
  // one index at most, and the next index brings new bodies.
  drop_gone();
  if (total_bytes_ + body->size() > options_.max_total_bytes) {
    found->second.failed = true;
    return nullptr;
  }
  auto file = BodyFile::create(*body, options_.directory);
  if (!file.ok()) {
    if (!warned_) {
      log::warning("{}: this answer and others like it are written from memory",
                   file.error().message());
      warned_ = true;
    }
    found->second.failed = true;
    return nullptr;
  }
  total_bytes_ += body->size();
  found->second.file = *file;
  return *file;
}

std::size_t BodyFiles::total_bytes() const {
  std::lock_guard lock(mutex_);
  return total_bytes_;
}

void BodyFiles::drop_gone() {
  for (auto entry = seen_.begin(); entry != seen_.end();) {
    if (entry->second.body.expired()) {
      if (entry->second.file) total_bytes_ -= entry->second.file->size();
      entry = seen_.erase(entry);
    } else {
      ++entry;
    }
  }
}

}  // namespace canrun::serve
