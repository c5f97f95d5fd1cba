// BodyFiles: large response bodies that are sent again and again (the cached API answers) held
// as files, so that the HTTP server sends them with sendfile(2) the way nginx sends a static
// file: the kernel hands the file's pages to the socket instead of copying the bytes out of the
// process on every response.
//
// A body gets its file on its second send (a body sent once is not worth a copy); the file is
// dropped once the body is gone, and lives on while a send still holds it. The file is an
// unnamed one (O_TMPFILE) in BodyFileOptions::directory, the temporary directory by default:
// a disk file system's page cache serves sendfile at a fraction of the cost of shared memory's
// (measured by bench/serve_vs_baselines.py against nginx). Where that directory cannot hold
// one, the file is a sealed memfd. The bytes are written once, at creation, and never again;
// a file with no name vanishes when closed, and nothing else can open it.
//
// Thread safety: file_for() may be called from many threads at once.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "core/result.h"

namespace canrun::serve {

//! A body's bytes in a file of its own: read-only after create().
class BodyFile {
 public:
  //! A new file holding `bytes`: unnamed in `directory` when it can hold one, else a sealed
  //! memfd (also when `directory` is empty). The error names the system call that failed.
  static Result<std::shared_ptr<const BodyFile>> create(std::string_view bytes,
                                                        const std::filesystem::path& directory);
  ~BodyFile();
  BodyFile(const BodyFile&) = delete;
  BodyFile& operator=(const BodyFile&) = delete;

  int fd() const { return fd_; }
  std::size_t size() const { return size_; }

 private:
  BodyFile(int fd, std::size_t size) : fd_(fd), size_(size) {}
  //! Takes `fd` and writes `bytes` to it, then seals it if asked.
  static Result<std::shared_ptr<const BodyFile>> filled(int fd, std::string_view bytes, bool seal);
  int fd_;
  std::size_t size_;
};

//! The temporary directory ($TMPDIR, else /tmp), or empty when there is none.
std::filesystem::path default_body_file_directory();

struct BodyFileOptions {
  std::size_t min_bytes = 64 * 1024;                     //!< smaller bodies are written from memory
  std::size_t max_total_bytes = std::size_t{256} << 20;  //!< every file's bytes together
  //! Where the files are made (unnamed); empty: memfd only.
  std::filesystem::path directory = default_body_file_directory();
};

class BodyFiles {
 public:
  explicit BodyFiles(BodyFileOptions options = {}) : options_(std::move(options)) {}

  //! The file holding `body`'s bytes, or nullptr: write the body from memory. Null when the
  //! body is under min_bytes, on its first send, and on every send when its file would have
  //! taken the files over max_total_bytes or could not be made (tried once per body).
  std::shared_ptr<const BodyFile> file_for(const std::shared_ptr<const std::string>& body);

  //! The bytes of the files held now (bodies gone are let go of when the next file is made).
  std::size_t total_bytes() const;

 private:
  struct Seen {
    std::weak_ptr<const std::string> body;  //!< tells a live body from a reused address
    std::shared_ptr<const BodyFile> file;   //!< null until its second send
    bool failed = false;                    //!< no room for its file, or none could be made
  };
  //! Forgets bodies that are gone, with their files. Called with mutex_ held.
  void drop_gone();

  BodyFileOptions options_;
  mutable std::mutex mutex_;
  std::unordered_map<const std::string*, Seen> seen_;
  std::size_t total_bytes_ = 0;
  std::size_t next_sweep_ = 64;  //!< drop_gone() once seen_ has this many entries
  bool warned_ = false;          //!< a failure to make a file has been logged
};

}  // namespace canrun::serve
