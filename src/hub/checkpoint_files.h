// Reading a checkpoint's safetensors headers — never its weights — from wherever the files
// are: the Hub (HTTP range requests), a local folder, or a snapshot in the HF cache.
//
// Which files: model.safetensors.index.json and every shard its weight_map names, else
// model.safetensors. Each header costs two reads: its 8-byte length, then exactly its bytes.
//
// Thread safety: a CheckpointFiles is used by one thread at a time.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/model_id.h"
#include "core/result.h"
#include "hub/hub_client.h"
#include "hub/safetensors_header.h"

namespace canrun::hub {

//! Bytes of one read and the whole file's size.
struct FileSlice {
  std::string bytes;
  std::uint64_t file_size = 0;
};

class CheckpointFiles {
 public:
  virtual ~CheckpointFiles() = default;
  //! Up to `length` bytes from `offset` of a repo-relative file (fewer at its end).
  virtual Result<FileSlice> read(std::string_view file, std::uint64_t offset,
                                 std::uint64_t length) = 0;
  //! Where the files come from, for messages and ModelFacts::weights_source.
  virtual std::string source() const = 0;
};

//! Files in a local folder (a checkout, or an HF cache snapshot whose symlinks it follows).
class LocalCheckpointFiles final : public CheckpointFiles {
 public:
  LocalCheckpointFiles(std::filesystem::path folder, std::string source)
      : folder_(std::move(folder)), source_(std::move(source)) {}
  Result<FileSlice> read(std::string_view file, std::uint64_t offset,
                         std::uint64_t length) override;
  std::string source() const override { return source_; }
  //! Every regular file below the folder, relative, sorted.
  std::vector<std::string> list() const;

 private:
  std::filesystem::path folder_;
  std::string source_;
};

//! Files of a repo at one commit on the Hub, read with Range requests.
class HubCheckpointFiles final : public CheckpointFiles {
 public:
  HubCheckpointFiles(HubClient& client, ModelId id, std::string revision)
      : client_(client), id_(std::move(id)), revision_(std::move(revision)) {}
  Result<FileSlice> read(std::string_view file, std::uint64_t offset,
                         std::uint64_t length) override;
  std::string source() const override { return "hub"; }

 private:
  HubClient& client_;
  ModelId id_;
  std::string revision_;
};

//! {endpoint}/{id}/resolve/{revision}/{file}, revision and file URL-encoded.
std::string resolve_url(const HubConfig& config, const ModelId& id, std::string_view revision,
                        std::string_view file);

//! Reads and checks one file's header.
Result<SafetensorsHeader> read_safetensors_header(CheckpointFiles& files, std::string_view file);

//! The headers of the checkpoint, given the repo's file list: (file, header) per shard in
//! file-name order. Errors: no safetensors (reason::kNoSafetensors), a malformed index, a shard
//! name that escapes the repo, a tensor of the index missing from its shard, and every header
//! error.
Result<std::vector<std::pair<std::string, SafetensorsHeader>>> read_checkpoint_headers(
    CheckpointFiles& files, const std::vector<std::string>& repo_files);

//! A diffusers pipeline's index: the repo's model_index.json names its components.
inline constexpr std::string_view kPipelineIndexFile = "model_index.json";

//! One component of a pipeline: model_index.json's "<name>": ["<library>", "<class>"].
struct PipelineComponent {
  std::string name;        //!< its folder: "unet", "text_encoder", "scheduler"
  std::string library;     //!< "diffusers", "transformers", or a module of the repo's own
  std::string class_name;  //!< "UNet2DConditionModel"
};

//! The repo's model_index.json, parsed (kCorrupt naming it when it is not a JSON object).
Result<nlohmann::json> read_pipeline_index(CheckpointFiles& files);
//! Its components, in its order; absent ones ([null, null]) and "_"-keys left out.
std::vector<PipelineComponent> pipeline_components(const nlohmann::json& model_index);

}  // namespace canrun::hub
