// The Hugging Face cache, laid out exactly as huggingface_hub writes it, so that files canrun
// fetched are found by huggingface_hub and transformers and the other way round:
//
//   <cache>/models--<owner>--<name>/blobs/<etag>              the file's bytes
//   <cache>/models--<owner>--<name>/refs/<revision>           the commit a branch/tag points to
//   <cache>/models--<owner>--<name>/snapshots/<commit>/<file> relative symlink to its blob
//   <cache>/models--<owner>--<name>/blobs/<etag>.incomplete   a download in progress
//   <cache>/.locks/models--<owner>--<name>/<etag>.lock        held while a blob is written
//
// <cache> is HF_HUB_CACHE, else $HF_HOME/hub, else $XDG_CACHE_HOME/huggingface/hub, else
// ~/.cache/huggingface/hub (huggingface_hub's constants).
//
// Thread safety: const methods only read the file system; store() writes atomically (blob
// renamed into place, symlink replaced), so concurrent writers of one file do not corrupt it.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "core/model_id.h"
#include "core/result.h"

namespace canrun::hub {

class HfCache {
 public:
  explicit HfCache(std::filesystem::path root) : root_(std::move(root)) {}
  static HfCache from_environment();

  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path repo_dir(const ModelId& id) const;

  //! The commit `revision` stands for in the cache: itself for a commit, refs/<revision> for a
  //! branch or tag; nullopt when the ref was never fetched.
  std::optional<std::string> commit_of(const ModelId& id, const Revision& revision) const;
  //! snapshots/<commit> for `revision`, when it exists.
  std::optional<std::filesystem::path> snapshot_dir(const ModelId& id,
                                                    const Revision& revision) const;
  //! The cached file of `revision`, when present (the symlink resolves to a blob).
  std::optional<std::filesystem::path> cached_file(const ModelId& id, const Revision& revision,
                                                   std::string_view filename) const;
  //! The blob name (ETag) a cached file links to.
  std::optional<std::string> cached_etag(const ModelId& id, const Revision& revision,
                                         std::string_view filename) const;

  //! blobs/<blob_name> of the repo (the name unchecked: link() and store() check it).
  std::filesystem::path blob_path(const ModelId& id, std::string_view blob_name) const;
  //! .locks/models--<owner>--<name>/<blob_name>.lock: huggingface_hub holds an flock on it
  //! while it writes that blob, and so does canrun, so the two never write one blob at once.
  std::filesystem::path blob_lock_path(const ModelId& id, std::string_view blob_name) const;

  //! Links snapshots/<commit>/<filename> to the existing blobs/<blob_name> (a relative
  //! symlink, replaced atomically) and, when `revision` is a branch or tag, points
  //! refs/<revision> at `commit`. Returns the snapshot path. Errors as store().
  Result<std::filesystem::path> link(const ModelId& id, const Revision& revision,
                                     std::string_view commit, std::string_view filename,
                                     std::string_view blob_name) const;

  //! Points refs/<ref> at `commit` (written atomically), as huggingface_hub does after a
  //! download by branch or tag name. A commit as `ref` writes nothing.
  Status write_ref(const ModelId& id, const Revision& ref, std::string_view commit) const;

  //! Writes `bytes` as blobs/<etag>, links snapshots/<commit>/<filename> to it and, when
  //! `revision` is a branch or tag, points refs/<revision> at `commit`. Returns the snapshot
  //! path. Errors: an etag that is not a plain token, a filename that escapes the snapshot.
  Result<std::filesystem::path> store(const ModelId& id, const Revision& revision,
                                      std::string_view commit, std::string_view filename,
                                      std::string_view etag, std::string_view bytes) const;

 private:
  std::filesystem::path root_;
};

//! Whether `name` can be a blob's name: 1..128 characters of [A-Za-z0-9_-] (an ETag without
//! its quotes: a git sha1 or an LFS sha256).
bool is_blob_name(std::string_view name);

//! Checks a repo-relative file name: not empty, relative, no "." or ".." parts, no NUL or
//! backslash. The error names the file.
Status check_repo_filename(std::string_view filename);

}  // namespace canrun::hub
