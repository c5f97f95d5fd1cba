#include "hub/checkpoint_manifest.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "core/json_fields.h"
#include "core/text.h"
#include "hub/facts_reader.h"
#include "hub/hf_cache.h"
#include "hub/paged_listing.h"

namespace canrun::hub {
namespace {

using nlohmann::json;

bool lower_hex(std::string_view text, std::size_t length) {
  return text.size() == length && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

Result<RepoFile> repo_file_from_json(const json& entry, std::string_view where) {
  RepoFile file;
  CANRUN_ASSIGN_OR_RETURN(file.path, required_json_string(entry, where, "path"));
  const std::string file_where = fmt::format("{}, file {}", where, quote_for_message(file.path));
  if (auto checked = check_repo_filename(file.path); !checked.ok()) {
    return checked.error().with_context(where);
  }
  std::int64_t size = -1;
  CANRUN_RETURN_IF_ERROR(read_json_integer(entry, file_where, "size", size));
  if (size < 0)
    return json_field_type_error(file_where, "size", entry.value("size", json()),
                                 "a non-negative integer");
  file.size = static_cast<std::uint64_t>(size);
  CANRUN_ASSIGN_OR_RETURN(file.blob_id, required_json_string(entry, file_where, "oid"));
  if (!is_blob_name(file.blob_id)) {
    return corrupt(fmt::format("{}: \"oid\" {} is not a blob name", file_where,
                               quote_for_message(file.blob_id)));
  }
  if (const auto lfs = entry.find("lfs"); lfs != entry.end() && !lfs->is_null()) {
    if (!lfs->is_object()) return json_field_type_error(file_where, "lfs", *lfs, "an object");
    std::string sha256;
    CANRUN_ASSIGN_OR_RETURN(sha256, required_json_string(*lfs, file_where + ", lfs", "oid"));
    if (!lower_hex(sha256, 64)) {
      return corrupt(fmt::format("{}: \"lfs\".\"oid\" {} is not a sha256", file_where,
                                 quote_for_message(sha256)));
    }
    std::int64_t lfs_size = size;
    CANRUN_RETURN_IF_ERROR(read_json_integer(*lfs, file_where + ", lfs", "size", lfs_size));
    if (lfs_size != size) {
      return corrupt(fmt::format("{}: \"size\" {} and \"lfs\".\"size\" {} differ", file_where, size,
                                 lfs_size));
    }
    file.lfs_sha256 = std::move(sha256);
  }
  return file;
}

bool ends_with_any(std::string_view text, std::initializer_list<std::string_view> suffixes) {
  return std::any_of(suffixes.begin(), suffixes.end(),
                     [&](std::string_view suffix) { return text.ends_with(suffix); });
}

//! Weights in a format other than safetensors, or a folder of exports.
bool is_other_weight_format(std::string_view path) {
  for (const std::string_view folder : {"onnx/", "openvino/", "coreml/", "tflite/", "gguf/"}) {
    if (path.starts_with(folder) ||
        path.find(std::string("/") + std::string(folder)) != std::string_view::npos) {
      return true;
    }
  }
  if (path.find(".mlpackage/") != std::string_view::npos) return true;
  return ends_with_any(path, {".bin", ".pt", ".pth", ".ckpt", ".h5", ".msgpack", ".ot", ".onnx",
                              ".onnx_data", ".onnx.data", ".gguf", ".tflite", ".mlmodel", ".pb",
                              ".keras", ".nemo", ".joblib", ".pkl", ".npz"});
}

}  // namespace

std::uint64_t CheckpointManifest::total_bytes() const {
  std::set<std::string> seen;
  std::uint64_t total = 0;
  for (const RepoFile& file : files) {
    if (seen.insert(file.blob_name()).second) total += file.size;
  }
  return total;
}

Result<std::vector<RepoFile>> fetch_repo_tree(HubClient& client, const ModelId& id,
                                              std::string_view commit) {
  const std::string same_hub = client.config().endpoint + "/api/models/";
  std::string url = fmt::format("{}/api/models/{}/tree/{}?recursive=true", client.config().endpoint,
                                id.str(), url_encode(commit, false));
  std::vector<RepoFile> files;
  std::set<std::string> seen;
  const std::string what = fmt::format("the tree of {} at {}", id.str(), commit);
  const PagedListing listing{
      url, {same_hub}, 1000, what, "files", [&](std::size_t page, const std::string& page_url) {
        return fmt::format("{}, page {} ({})", what, page, quote_for_message(page_url, 160));
      }};
  CANRUN_RETURN_IF_ERROR(
      walk_pages(client, listing, [&](const json& body, const std::string& where) -> Result<bool> {
        for (std::size_t idx = 0; idx < body.size(); ++idx) {
          const json& entry = body[idx];
          const std::string entry_where = fmt::format("{}, entry {}", where, idx + 1);
          if (!entry.is_object())
            return json_field_type_error(entry_where, "entry", entry, "an object");
          std::string type = "file";
          CANRUN_RETURN_IF_ERROR(read_json_string(entry, entry_where, "type", type));
          if (type != "file") continue;  // "directory": its files are listed too (recursive)
          CANRUN_ASSIGN_OR_RETURN(RepoFile file, repo_file_from_json(entry, entry_where));
          if (!seen.insert(file.path).second) continue;  // a page boundary moved under us
          files.push_back(std::move(file));
        }
        return true;
      }));
  std::sort(files.begin(), files.end(),
            [](const RepoFile& a, const RepoFile& b) { return a.path < b.path; });
  return files;
}

std::vector<RepoFile> files_for_loading(std::vector<RepoFile> files) {
  const bool has_safetensors = std::any_of(files.begin(), files.end(), [](const RepoFile& file) {
    return file.path.ends_with(".safetensors");
  });
  if (!has_safetensors) return files;
  std::erase_if(files, [](const RepoFile& file) { return is_other_weight_format(file.path); });
  return files;
}

Result<CheckpointManifest> fetch_checkpoint_manifest(HubClient& client, const ModelId& id,
                                                     const Revision& revision) {
  std::string commit = revision.str();
  if (!revision.is_commit()) {
    CANRUN_ASSIGN_OR_RETURN(const ModelFacts info, fetch_model_info(client, id, revision));
    auto parsed = Revision::parse(info.sha);
    if (!parsed.ok() || !parsed->is_commit()) {
      return corrupt(fmt::format("the Hub's model info of {} at {} has no commit (\"sha\" {})",
                                 id.str(), revision.str(), quote_for_message(info.sha)));
    }
    commit = parsed->str();
  }
  CANRUN_ASSIGN_OR_RETURN(std::vector<RepoFile> files, fetch_repo_tree(client, id, commit));
  CheckpointManifest manifest{id, commit, std::nullopt, files_for_loading(std::move(files))};
  if (!revision.is_commit()) manifest.ref = revision;
  return manifest;
}

}  // namespace canrun::hub
