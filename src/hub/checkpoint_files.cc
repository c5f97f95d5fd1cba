#include "hub/checkpoint_files.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <system_error>

#include "core/text.h"
#include "hub/hf_cache.h"

namespace canrun::hub {
namespace {

namespace fs = std::filesystem;

// The 8-byte length first, then exactly the header: not one byte of the weights is read.
constexpr std::uint64_t kFirstRead = 8;
constexpr std::uint64_t kMaxIndexBytes = 100'000'000;
constexpr std::string_view kIndexFile = "model.safetensors.index.json";
constexpr std::string_view kSingleFile = "model.safetensors";

}  // namespace

Result<FileSlice> LocalCheckpointFiles::read(std::string_view file, std::uint64_t offset,
                                             std::uint64_t length) {
  CANRUN_RETURN_IF_ERROR(check_repo_filename(file));
  const fs::path path = folder_ / fs::path(std::string(file));
  std::error_code error;
  const auto size = fs::file_size(path, error);
  if (error) {
    return not_found(fmt::format("{}: cannot read {}: {}", source_,
                                 quote_for_message(path.string()), error.message()));
  }
  FileSlice slice;
  slice.file_size = size;
  if (offset >= size) return slice;
  std::ifstream in(path, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(offset));
  slice.bytes.resize(std::min<std::uint64_t>(length, size - offset));
  in.read(slice.bytes.data(), static_cast<std::streamsize>(slice.bytes.size()));
  if (!in) return io_error(fmt::format("{}: read of {} failed", source_, path.string()));
  return slice;
}

std::vector<std::string> LocalCheckpointFiles::list() const {
  std::vector<std::string> files;
  std::error_code error;
  for (fs::recursive_directory_iterator it(folder_, error), end; !error && it != end;
       it.increment(error)) {
    if (it->is_regular_file(error))
      files.push_back(it->path().lexically_relative(folder_).generic_string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string resolve_url(const HubConfig& config, const ModelId& id, std::string_view revision,
                        std::string_view file) {
  return fmt::format("{}/{}/resolve/{}/{}", config.endpoint, id.str(), url_encode(revision, false),
                     url_encode(file, true));
}

Result<FileSlice> HubCheckpointFiles::read(std::string_view file, std::uint64_t offset,
                                           std::uint64_t length) {
  CANRUN_RETURN_IF_ERROR(check_repo_filename(file));
  // An empty file answers 416 (kCorrupt, "file too short"): no header can be in it.
  CANRUN_ASSIGN_OR_RETURN(
      auto slice,
      client_.get_range(resolve_url(client_.config(), id_, revision_, file), offset, length));
  return FileSlice{std::move(slice.bytes), slice.file_size};
}

Result<SafetensorsHeader> read_safetensors_header(CheckpointFiles& files, std::string_view file) {
  const auto in_file = [&](const Error& error) {
    return error.with_context(fmt::format("{} ({})", file, files.source()));
  };
  auto first = files.read(file, 0, kFirstRead);
  if (!first.ok()) return in_file(first.error());
  auto length = parse_safetensors_prefix(first->bytes, first->file_size);
  if (!length.ok()) return in_file(length.error());
  std::string header_json;
  if (8 + *length <= first->bytes.size()) {
    header_json = first->bytes.substr(8, *length);
  } else {
    auto rest = files.read(file, 8, *length);
    if (!rest.ok()) return in_file(rest.error());
    if (rest->bytes.size() != *length) {
      return in_file(corrupt(fmt::format("the header is {} bytes but only {} could be read",
                                         *length, rest->bytes.size())));
    }
    header_json = std::move(rest->bytes);
  }
  auto header = parse_safetensors_header(header_json, first->file_size);
  if (!header.ok()) return in_file(header.error());
  return header;
}

namespace {

//! The headers of one model's safetensors: `single` or the shards its index `index` names
//! (repo paths); kNotFound (no_safetensors) when the repo has neither.
Result<std::vector<std::pair<std::string, SafetensorsHeader>>> read_model_headers(
    CheckpointFiles& files, const std::vector<std::string>& repo_files, const std::string& single,
    const std::string& index_file, std::string_view what) {
  const auto has = [&](std::string_view name) {
    return std::find(repo_files.begin(), repo_files.end(), name) != repo_files.end();
  };
  std::vector<std::pair<std::string, SafetensorsHeader>> headers;
  if (!has(index_file)) {
    if (!has(single)) {
      return not_found(fmt::format("no_safetensors: {} has neither {} nor {} ({} files)", what,
                                   single, index_file, repo_files.size()))
          .with_reason(reason::kNoSafetensors);
    }
    CANRUN_ASSIGN_OR_RETURN(auto header, read_safetensors_header(files, single));
    headers.emplace_back(single, std::move(header));
    return headers;
  }
  // Shards are named relative to the index's folder.
  const std::string folder = index_file.substr(0, index_file.rfind('/') + 1);
  const auto where = fmt::format("{} ({})", index_file, files.source());
  CANRUN_ASSIGN_OR_RETURN(FileSlice index_text, files.read(index_file, 0, kMaxIndexBytes + 1));
  if (index_text.bytes.size() > kMaxIndexBytes) {
    return corrupt(fmt::format("{}: larger than {} bytes", where, kMaxIndexBytes));
  }
  const auto index = nlohmann::json::parse(index_text.bytes, nullptr, false);
  if (index.is_discarded()) {
    return corrupt(
        fmt::format("{}: not valid JSON ({} bytes; truncated?)", where, index_text.bytes.size()));
  }
  if (!index.is_object() || !index.contains("weight_map") || !index["weight_map"].is_object()) {
    return corrupt(fmt::format("{}: no \"weight_map\" object", where));
  }
  std::map<std::string, std::set<std::string>> tensors_by_shard;
  for (const auto& [tensor, shard] : index["weight_map"].items()) {
    if (!shard.is_string()) {
      return corrupt(fmt::format("{}: weight_map[{}] holds {}, not a file name", where,
                                 quote_for_message(tensor), shard.type_name()));
    }
    const auto shard_name = shard.get<std::string>();
    if (auto status = check_repo_filename(shard_name); !status.ok()) {
      return corrupt(fmt::format("{}: weight_map[{}]: {}", where, quote_for_message(tensor),
                                 status.error().message()));
    }
    tensors_by_shard[folder + shard_name].insert(tensor);
  }
  if (tensors_by_shard.empty()) return corrupt(fmt::format("{}: weight_map is empty", where));
  for (const auto& [shard, expected] : tensors_by_shard) {
    CANRUN_ASSIGN_OR_RETURN(auto header, read_safetensors_header(files, shard));
    std::set<std::string> present;
    for (const auto& tensor : header.tensors) present.insert(tensor.name);
    for (const auto& tensor : expected) {
      if (!present.contains(tensor)) {
        return corrupt(fmt::format("{}: the index puts tensor {} in {}, whose header lacks it",
                                   where, quote_for_message(tensor), shard));
      }
    }
    headers.emplace_back(shard, std::move(header));
  }
  return headers;
}

//! A diffusers pipeline (model_index.json): the headers of every component that has weights
//! (a folder with a config.json: the models, not the tokenizers or the scheduler), whether
//! diffusers' (diffusion_pytorch_model.safetensors) or transformers' (model.safetensors).
Result<std::vector<std::pair<std::string, SafetensorsHeader>>> read_pipeline_headers(
    CheckpointFiles& files, const std::vector<std::string>& repo_files) {
  CANRUN_ASSIGN_OR_RETURN(const auto index, read_pipeline_index(files));
  const auto has = [&](const std::string& name) {
    return std::find(repo_files.begin(), repo_files.end(), name) != repo_files.end();
  };
  std::vector<std::pair<std::string, SafetensorsHeader>> headers;
  for (const PipelineComponent& component : pipeline_components(index)) {
    if (!has(component.name + "/config.json")) continue;  // no weights: a tokenizer, a scheduler
    // Another library's (or the repo's own) class: not loaded, so not read (see
    // ModelFacts::foreign_components, which excludes the pipeline).
    if (component.library != "diffusers" && component.library != "transformers") continue;
    std::string found_single, found_index;
    for (const char* stem : {"diffusion_pytorch_model", "model"}) {
      const std::string single = fmt::format("{}/{}.safetensors", component.name, stem);
      if (has(single) || has(single + ".index.json")) {
        found_single = single;
        found_index = single + ".index.json";
        break;
      }
    }
    if (found_single.empty()) {
      return not_found(fmt::format("no_safetensors: the pipeline's {} ({}) has no safetensors "
                                   "weights in {}/",
                                   component.name, component.class_name, component.name))
          .with_reason(reason::kNoSafetensors);
    }
    CANRUN_ASSIGN_OR_RETURN(auto component_headers,
                            read_model_headers(files, repo_files, found_single, found_index,
                                               fmt::format("the pipeline's {}", component.name)));
    for (auto& header : component_headers) headers.push_back(std::move(header));
  }
  if (headers.empty()) {
    return not_found(
               "no_safetensors: the pipeline's model_index.json names no component with "
               "weights")
        .with_reason(reason::kNoSafetensors);
  }
  return headers;
}

}  // namespace

Result<nlohmann::json> read_pipeline_index(CheckpointFiles& files) {
  const auto where = fmt::format("{} ({})", kPipelineIndexFile, files.source());
  CANRUN_ASSIGN_OR_RETURN(FileSlice text, files.read(kPipelineIndexFile, 0, kMaxIndexBytes + 1));
  if (text.bytes.size() > kMaxIndexBytes) {
    return corrupt(fmt::format("{}: larger than {} bytes", where, kMaxIndexBytes));
  }
  auto index = nlohmann::json::parse(text.bytes, nullptr, false);
  if (!index.is_object()) return corrupt(fmt::format("{}: not a JSON object", where));
  return index;
}

std::vector<PipelineComponent> pipeline_components(const nlohmann::json& model_index) {
  std::vector<PipelineComponent> out;
  for (const auto& [name, value] : model_index.items()) {
    // "_class_name", "_diffusers_version": the pipeline's own; [null, null]: an absent component.
    if (name.starts_with('_') || !value.is_array() || value.size() != 2 || !value[0].is_string() ||
        !value[1].is_string() || check_repo_filename(name).ok() == false) {
      continue;
    }
    out.push_back({name, value[0].get<std::string>(), value[1].get<std::string>()});
  }
  return out;
}

Result<std::vector<std::pair<std::string, SafetensorsHeader>>> read_checkpoint_headers(
    CheckpointFiles& files, const std::vector<std::string>& repo_files) {
  const auto has = [&](std::string_view name) {
    return std::find(repo_files.begin(), repo_files.end(), name) != repo_files.end();
  };
  if (has(kPipelineIndexFile) && !has(kSingleFile) && !has(kIndexFile)) {
    return read_pipeline_headers(files, repo_files);
  }
  return read_model_headers(files, repo_files, std::string(kSingleFile), std::string(kIndexFile),
                            "the repo");
}

}  // namespace canrun::hub
