// The Hugging Face cache, laid out exactly as huggingface_hub writes it, so that files canrun
// fetched are found by huggingface_hub and transformers and the other way round:
//
//   <cache>/models--<owner>--<name>/blobs/<etag>              the file's bytes
//   <cache>/models--<owner>--<name>/refs/<revision>           the commit a branch/tag points to
//   <cache>/models--<owner>--<name>/snapshots/<commit>/<file> relative symlink to its blob
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

  //! Writes `bytes` as blobs/<etag>, links snapshots/<commit>/<filename> to it and, when
  //! `revision` is a branch or tag, points refs/<revision> at `commit`. Returns the snapshot
  //! path. Errors: an etag that is not a plain token, a filename that escapes the snapshot.
  Result<std::filesystem::path> store(const ModelId& id, const Revision& revision,
                                      std::string_view commit, std::string_view filename,
                                      std::string_view etag, std::string_view bytes) const;

 private:
  std::filesystem::path root_;
};

//! Checks a repo-relative file name: not empty, relative, no "." or ".." parts, no NUL or
//! backslash. The error names the file.
Status check_repo_filename(std::string_view filename);

}  // namespace canrun::hub
