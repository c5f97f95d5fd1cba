// What a checkpoint is before any byte is fetched: the files of a repo at one commit, from the
// Hub's tree listing (/api/models/{id}/tree/{commit}?recursive=true), each with its size and
// blob name, less the weight formats from_pretrained does not need. Known up front, so a disk
// budget can be asked for room first (checkpoint_download.h fetches them).
//
// Thread safety: as HubClient (one thread at a time per client); the rest are values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/model_id.h"
#include "core/result.h"
#include "hub/hub_client.h"

namespace canrun::hub {

//! One file of a repo at a commit, as the Hub's tree lists it.
struct RepoFile {
  std::string path;                       //!< repo-relative, e.g. "model.safetensors"
  std::uint64_t size = 0;                 //!< bytes
  std::string blob_id;                    //!< git blob sha1: a regular file's ETag
  std::optional<std::string> lfs_sha256;  //!< LFS files: sha256 of the content, their ETag

  bool is_lfs() const { return lfs_sha256.has_value(); }
  //! Its blob's name in the HF cache: the sha256 for LFS files, else the git blob sha1.
  const std::string& blob_name() const { return lfs_sha256 ? *lfs_sha256 : blob_id; }
};

//! A repo at one commit and the files to fetch.
struct CheckpointManifest {
  ModelId model;
  std::string commit;           //!< 40 hex digits
  std::optional<Revision> ref;  //!< the branch or tag it was resolved from: refs/<ref>
  std::vector<RepoFile> files;  //!< sorted by path

  //! The sum of the files' sizes (blobs shared by two files counted once).
  std::uint64_t total_bytes() const;
};

//! /api/models/{id}/tree/{commit}?recursive=true, every page (Link rel="next"); folders left
//! out. Errors name the page: malformed JSON, an entry without path/size/oid, a path that
//! escapes the repo (check_repo_filename), a blob name that is not a plain token.
Result<std::vector<RepoFile>> fetch_repo_tree(HubClient& client, const ModelId& id,
                                              std::string_view commit);

//! The files from_pretrained needs. When the repo has safetensors weights, the other weight
//! formats it may also hold (*.bin, *.pt, *.pth, *.ckpt, *.h5, *.msgpack, *.ot, *.onnx*,
//! *.gguf, *.tflite, *.mlmodel, onnx/, openvino/, coreml/ ...) are left out; otherwise all.
std::vector<RepoFile> files_for_loading(std::vector<RepoFile> files);

//! The commit `revision` names (model info), its tree, and files_for_loading of it. `ref` is
//! set when `revision` is a branch or tag.
Result<CheckpointManifest> fetch_checkpoint_manifest(HubClient& client, const ModelId& id,
                                                     const Revision& revision);

}  // namespace canrun::hub
