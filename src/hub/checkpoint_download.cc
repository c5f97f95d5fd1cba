#include "hub/checkpoint_download.h"

#include <fmt/format.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <set>
#include <system_error>

#include "core/atomic_file.h"
#include "core/log.h"
#include "core/text.h"
#include "hub/checkpoint_files.h"
#include "hub/facts_reader.h"

namespace canrun::hub {
namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t kProgressEvery = 4ull << 20;
constexpr std::size_t kReadChunk = 1 << 20;

//! A running sha256 (LFS files) or git blob sha1 ("blob <size>\0" + content, regular files).
class ContentDigest {
 public:
  ContentDigest(bool lfs, std::uint64_t size) : lfs_(lfs), size_(size) { reset(); }

  void reset() {
    context_.reset(EVP_MD_CTX_new());
    EVP_DigestInit_ex(context_.get(), lfs_ ? EVP_sha256() : EVP_sha1(), nullptr);
    if (!lfs_) update(fmt::format("blob {}", size_) + std::string(1, '\0'));
  }
  void update(std::string_view bytes) {
    EVP_DigestUpdate(context_.get(), bytes.data(), bytes.size());
  }
  //! Lower-case hex; the digest is spent afterwards.
  std::string hex() {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    EVP_DigestFinal_ex(context_.get(), digest, &length);
    std::string out;
    for (unsigned int idx = 0; idx < length; ++idx) out += fmt::format("{:02x}", digest[idx]);
    return out;
  }

 private:
  struct Free {
    void operator()(EVP_MD_CTX* context) const { EVP_MD_CTX_free(context); }
  };
  bool lfs_;
  std::uint64_t size_;
  std::unique_ptr<EVP_MD_CTX, Free> context_;
};

//! An ETag header value as huggingface_hub names blobs: W/ and quotes removed.
std::string etag_blob_name(std::string etag) {
  if (etag.starts_with("W/")) etag.erase(0, 2);
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') {
    etag = etag.substr(1, etag.size() - 2);
  }
  return etag;
}

std::optional<std::uint64_t> parse_size(std::string_view text) {
  std::uint64_t value = 0;
  if (text.empty()) return std::nullopt;
  for (const char c : text) {
    if (c < '0' || c > '9' || value > (UINT64_MAX - 9) / 10) return std::nullopt;
    value = value * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return value;
}

Error stopped_error(std::string_view file) {
  return Error(ErrorCode::kUnavailable,
               fmt::format("the download of {} was stopped; its partial file is kept",
                           quote_for_message(file)));
}

//! Streams one file's answer into its .incomplete, hashing as it goes.
class IncompleteBlobSink final : public BodySink {
 public:
  IncompleteBlobSink(const CheckpointManifest& manifest, const RepoFile& file, fs::path incomplete,
                     std::FILE* out, ContentDigest& digest, std::uint64_t offset,
                     std::function<void(std::uint64_t)> on_bytes, std::stop_token stop)
      : manifest_(manifest),
        file_(file),
        incomplete_(std::move(incomplete)),
        out_(out),
        digest_(digest),
        offset_(offset),
        on_bytes_(std::move(on_bytes)),
        stop_(std::move(stop)) {}

  std::uint64_t offset() const { return offset_; }
  //! Whether the last error came from the bytes or headers being wrong (the partial must go).
  bool content_wrong() const { return content_wrong_; }

  Status begin(const HttpResponse& head) override {
    const std::string what = quote_for_message(file_.path);
    const auto commit = head.earliest_header("x-repo-commit");
    const auto etag = head.earliest_header("x-linked-etag").has_value()
                          ? head.earliest_header("x-linked-etag")
                          : head.earliest_header("etag");
    if (!commit || !etag) {
      return wrong(fmt::format("{} of {}: the Hub's answer lacks {}; is HF_ENDPOINT a Hub?", what,
                               manifest_.model.str(), commit ? "an ETag" : "X-Repo-Commit"));
    }
    if (*commit != manifest_.commit) {
      return wrong(fmt::format("{} of {}: the Hub answered for commit {} where {} was asked", what,
                               manifest_.model.str(), quote_for_message(*commit),
                               manifest_.commit));
    }
    if (etag_blob_name(*etag) != file_.blob_name()) {
      return wrong(fmt::format("{} of {} at {}: the Hub's ETag {} differs from the tree's {}", what,
                               manifest_.model.str(), manifest_.commit, quote_for_message(*etag),
                               file_.blob_name()));
    }
    std::optional<std::uint64_t> total;
    if (const auto linked = head.earliest_header("x-linked-size")) total = parse_size(*linked);
    if (head.status == 206) {
      // Content-Range: bytes FIRST-LAST/TOTAL
      const auto range = head.header("content-range");
      std::uint64_t first = 0, last = 0, range_total = 0;
      if (!range ||
          std::sscanf(range->c_str(), "bytes %lu-%lu/%lu", &first, &last, &range_total) != 3 ||
          first != offset_ || last < first) {
        return wrong(fmt::format("{} of {}: Content-Range {} does not continue at byte {}", what,
                                 manifest_.model.str(), quote_for_message(range.value_or("(none)")),
                                 offset_));
      }
      if (!total) total = range_total;
    } else if (head.status == 200) {
      if (offset_ > 0) {
        // The server ignored the Range header: start the file again.
        log::info("{}: the server ignored the Range header; fetching it from the start",
                  file_.path);
        if (std::fflush(out_) != 0 || ::ftruncate(::fileno(out_), 0) != 0) {
          return io_error(fmt::format("cannot truncate {}", incomplete_.string()));
        }
        std::rewind(out_);
        offset_ = 0;
        digest_.reset();
      }
      if (!total) {
        if (const auto length = head.header("content-length")) total = parse_size(*length);
      }
    } else {
      return wrong(fmt::format("{} of {}: HTTP {} where the file was expected", what,
                               manifest_.model.str(), head.status));
    }
    if (total && *total != file_.size) {
      return wrong(fmt::format("{} of {} at {}: the Hub's headers say {} bytes, its tree {}", what,
                               manifest_.model.str(), manifest_.commit, *total, file_.size));
    }
    return ok_status();
  }

  Status write(std::string_view bytes) override {
    if (stop_.stop_requested()) return stopped_error(file_.path);
    if (offset_ + bytes.size() > file_.size) {
      return wrong(fmt::format("{} of {}: more than the {} bytes the Hub announced",
                               quote_for_message(file_.path), manifest_.model.str(), file_.size));
    }
    if (std::fwrite(bytes.data(), 1, bytes.size(), out_) != bytes.size()) {
      return io_error(fmt::format("cannot write {} (disk full?)", incomplete_.string()));
    }
    digest_.update(bytes);
    offset_ += bytes.size();
    on_bytes_(offset_);
    return ok_status();
  }

 private:
  Status wrong(std::string message) {
    content_wrong_ = true;
    return corrupt(std::move(message));
  }

  const CheckpointManifest& manifest_;
  const RepoFile& file_;
  fs::path incomplete_;
  std::FILE* out_;
  ContentDigest& digest_;
  std::uint64_t offset_;
  std::function<void(std::uint64_t)> on_bytes_;
  std::stop_token stop_;
  bool content_wrong_ = false;
};

struct FileCloser {
  void operator()(std::FILE* file) const { std::fclose(file); }
};

//! Hashes the first `length` bytes already in `path`.
Status hash_existing(const fs::path& path, std::uint64_t length, ContentDigest& digest) {
  std::ifstream in(path, std::ios::binary);
  std::string buffer(kReadChunk, '\0');
  while (length > 0 && in) {
    const auto want = static_cast<std::streamsize>(std::min<std::uint64_t>(length, kReadChunk));
    in.read(buffer.data(), want);
    const auto got = in.gcount();
    if (got <= 0) break;
    digest.update(std::string_view(buffer.data(), static_cast<std::size_t>(got)));
    length -= static_cast<std::uint64_t>(got);
  }
  if (length != 0) return io_error(fmt::format("cannot read {}", path.string()));
  return ok_status();
}

class CheckpointDownload {
 public:
  //! `commit` is manifest.commit, parsed by the caller.
  CheckpointDownload(HubClient& client, const HfCache& cache, const CheckpointManifest& manifest,
                     Revision commit, const CheckpointDownloadOptions& options)
      : client_(client),
        cache_(cache),
        manifest_(manifest),
        commit_(std::move(commit)),
        options_(options) {
    bytes_total_ = manifest.total_bytes();
  }

  Result<DownloadedCheckpoint> run() {
    std::set<std::string> done_blobs;
    for (const RepoFile& file : manifest_.files) {
      if (options_.stop.stop_requested()) return stopped_error(file.path);
      CANRUN_RETURN_IF_ERROR(check_repo_filename(file.path));
      if (!is_blob_name(file.blob_name())) {
        return corrupt(fmt::format("{} of {}: {} is not a blob name", quote_for_message(file.path),
                                   manifest_.model.str(), quote_for_message(file.blob_name())));
      }
      if (done_blobs.insert(file.blob_name()).second) {
        CANRUN_RETURN_IF_ERROR(fetch_blob(file));
      }
      CANRUN_RETURN_IF_ERROR(
          cache_.link(manifest_.model, commit_, manifest_.commit, file.path, file.blob_name()));
    }
    if (manifest_.ref) {
      CANRUN_RETURN_IF_ERROR(cache_.write_ref(manifest_.model, *manifest_.ref, manifest_.commit));
    }
    result_.snapshot = cache_.repo_dir(manifest_.model) / "snapshots" / manifest_.commit;
    return result_;
  }

 private:
  void report(std::string_view file, bool force) {
    if (!options_.progress) return;
    const std::uint64_t done = done_bytes_ + file_bytes_;
    if (!force && done < last_reported_ + kProgressEvery) return;
    last_reported_ = done;
    options_.progress(DownloadProgress{done, bytes_total_, file});
  }

  //! Puts blobs/<blob_name> of `file` in the cache, from the cache or the Hub.
  Status fetch_blob(const RepoFile& file) {
    const std::string what = fmt::format("{} of {} at {}", quote_for_message(file.path),
                                         manifest_.model.str(), manifest_.commit);
    const fs::path blob = cache_.blob_path(manifest_.model, file.blob_name());
    std::error_code error;
    fs::create_directories(blob.parent_path(), error);
    if (error) {
      return io_error(
          fmt::format("cannot create {}: {}", blob.parent_path().string(), error.message()));
    }
    CANRUN_ASSIGN_OR_RETURN(
        FileLock lock, FileLock::acquire(cache_.blob_lock_path(manifest_.model, file.blob_name())));
    file_bytes_ = 0;
    if (fs::is_regular_file(blob, error)) {
      const std::uint64_t size = fs::file_size(blob, error);
      if (error || size != file.size) {
        return corrupt(
            fmt::format("{}: the HF cache's blob {} holds {} bytes where the Hub has "
                        "{}; delete it to fetch it again",
                        what, blob.string(), error ? 0 : size, file.size));
      }
      result_.bytes_reused += file.size;
      done_bytes_ += file.size;
      report(file.path, true);
      return ok_status();
    }
    if (client_.config().offline) {
      return Error(ErrorCode::kUnavailable,
                   fmt::format("HF_HUB_OFFLINE is set and {} is not in the HF cache {}", what,
                               quote_for_message(cache_.root().string())))
          .with_reason(reason::kNotCached);
    }
    const fs::path incomplete = blob.string() + ".incomplete";
    std::uint64_t offset = 0;
    if (fs::is_regular_file(incomplete, error)) {
      offset = fs::file_size(incomplete, error);
      if (error || offset > file.size) offset = 0;  // not this file's start: fetch it whole
    }
    std::unique_ptr<std::FILE, FileCloser> out(
        std::fopen(incomplete.c_str(), offset > 0 ? "r+b" : "wb"));
    if (!out) return io_error(fmt::format("cannot open {} for writing", incomplete.string()));
    if (offset > 0 && std::fseek(out.get(), static_cast<long>(offset), SEEK_SET) != 0) {
      return io_error(fmt::format("cannot seek in {}", incomplete.string()));
    }
    ContentDigest digest(file.is_lfs(), file.size);
    if (offset > 0) {
      CANRUN_RETURN_IF_ERROR(hash_existing(incomplete, offset, digest));
      result_.bytes_reused += offset;
      log::info("{}: resuming at byte {} of {}", what, offset, file.size);
    }
    file_bytes_ = offset;
    // A failure before any byte arrived leaves no empty .incomplete behind.
    const auto drop_if_empty = [&](Error failure) {
      out.reset();
      if (offset == 0) fs::remove(incomplete, error);
      return failure;
    };
    const std::string url =
        resolve_url(client_.config(), manifest_.model, manifest_.commit, file.path);
    int resumes_left = options_.max_resumes;
    // An empty file is asked for once; a partial file that is already whole is only verified.
    for (bool first = true; offset < file.size || (file.size == 0 && first); first = false) {
      std::vector<std::pair<std::string, std::string>> headers{{"Accept-Encoding", "identity"}};
      if (offset > 0) {
        headers.emplace_back("Range", fmt::format("bytes={}-", offset));
        ++result_.resumed_transfers;
      }
      IncompleteBlobSink sink(
          manifest_, file, incomplete, out.get(), digest, offset,
          [&](std::uint64_t now_at) {
            file_bytes_ = now_at;
            report(file.path, false);
          },
          options_.stop);
      auto response = client_.get_streamed(url, std::move(headers), sink);
      const std::uint64_t before = offset;
      offset = sink.offset();
      result_.bytes_fetched += offset >= before ? offset - before : offset;
      if (options_.stop.stop_requested()) {
        return drop_if_empty(stopped_error(file.path));
      }
      if (sink.content_wrong()) {
        out.reset();
        fs::remove(incomplete, error);
        return response.error();
      }
      if (response.ok() && offset == file.size) break;
      std::fflush(out.get());
      // Cut short (a dropped connection, a stall, a body that ended early): continue from where
      // it stopped while each try makes progress.
      const bool interrupted = response.ok() ||
                               response.error().code() == ErrorCode::kUnavailable ||
                               response.error().code() == ErrorCode::kTimeout;
      if (!interrupted) return drop_if_empty(response.error().with_context(what));
      const std::string why = response.ok() ? "the body ended early" : response.error().message();
      if (offset == before || resumes_left == 0) {
        return drop_if_empty(
            Error(response.ok() ? ErrorCode::kUnavailable : response.error().code(),
                  fmt::format("{}: stopped at byte {} of {} ({}){}", what, offset, file.size, why,
                              offset > 0 ? "; the partial file is kept and the next download "
                                           "continues it"
                                         : ""))
                .with_reason(response.ok() ? "" : response.error().reason()));
      }
      --resumes_left;
      log::info("{}: interrupted at byte {} of {} ({}); resuming", what, offset, file.size, why);
    }
    if (std::fflush(out.get()) != 0 || ::fsync(::fileno(out.get())) != 0) {
      return io_error(fmt::format("cannot write {} (disk full?)", incomplete.string()));
    }
    out.reset();
    const std::string got = digest.hex();
    const std::string& want = file.is_lfs() ? *file.lfs_sha256 : file.blob_id;
    if (got != want) {
      fs::remove(incomplete, error);
      return corrupt(
          fmt::format("{}: the downloaded bytes have {} {} where the Hub names {}; the "
                      "partial file was deleted",
                      what, file.is_lfs() ? "sha256" : "git sha1", got, want));
    }
    fs::rename(incomplete, blob, error);
    if (error) {
      return io_error(fmt::format("cannot rename {} to {}: {}", incomplete.string(), blob.string(),
                                  error.message()));
    }
    done_bytes_ += file.size;
    file_bytes_ = 0;
    report(file.path, true);
    return ok_status();
  }

  HubClient& client_;
  const HfCache& cache_;
  const CheckpointManifest& manifest_;
  Revision commit_;
  const CheckpointDownloadOptions& options_;
  DownloadedCheckpoint result_;
  std::uint64_t bytes_total_ = 0;
  std::uint64_t done_bytes_ = 0;  // finished files
  std::uint64_t file_bytes_ = 0;  // the file in progress
  std::uint64_t last_reported_ = 0;
};

}  // namespace

Result<DownloadedCheckpoint> download_checkpoint(HubClient& client, const HfCache& cache,
                                                 const CheckpointManifest& manifest,
                                                 const CheckpointDownloadOptions& options) {
  auto commit = Revision::parse(manifest.commit);
  if (!commit.ok() || !commit->is_commit()) {
    return invalid_argument(fmt::format("the commit {} of {} is not 40 hex digits",
                                        quote_for_message(manifest.commit), manifest.model.str()));
  }
  return CheckpointDownload(client, cache, manifest, std::move(commit).value(), options).run();
}

}  // namespace canrun::hub
