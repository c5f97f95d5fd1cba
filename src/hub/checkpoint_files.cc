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

Result<std::vector<std::pair<std::string, SafetensorsHeader>>> read_checkpoint_headers(
    CheckpointFiles& files, const std::vector<std::string>& repo_files) {
  const auto has = [&](std::string_view name) {
    return std::find(repo_files.begin(), repo_files.end(), name) != repo_files.end();
  };
  std::vector<std::pair<std::string, SafetensorsHeader>> headers;
  if (!has(kIndexFile)) {
    if (!has(kSingleFile)) {
      return not_found(fmt::format("no_safetensors: the repo has neither {} nor {} ({} files)", kSingleFile,
                                   kIndexFile, repo_files.size()))
          .with_reason(reason::kNoSafetensors);
    }
    CANRUN_ASSIGN_OR_RETURN(auto header, read_safetensors_header(files, kSingleFile));
    headers.emplace_back(std::string(kSingleFile), std::move(header));
    return headers;
  }
  const auto where = fmt::format("{} ({})", kIndexFile, files.source());
  CANRUN_ASSIGN_OR_RETURN(FileSlice index_text, files.read(kIndexFile, 0, kMaxIndexBytes + 1));
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
    tensors_by_shard[shard_name].insert(tensor);
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


}  // namespace canrun::hub
