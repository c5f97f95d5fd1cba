#include "hub/facts_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "core/log.h"
#include "core/text.h"
#include "hub/checkpoint_files.h"
#include "hub/hub_download.h"

namespace canrun::hub {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kModelCardFile = "README.md";
//! The card's front matter comes first; what lies beyond this is not read.
constexpr std::uint64_t kMaxCardBytes = 64 * 1024;

Status apply_config_file(const fs::path& path, ModelFacts& facts) {
  CANRUN_ASSIGN_OR_RETURN(const std::string text, read_file(path));
  const auto config = nlohmann::json::parse(text, nullptr, false);
  if (config.is_discarded()) {
    return corrupt(fmt::format("config.json {}: not valid JSON ({} bytes; truncated?)",
                               quote_for_message(path.string()), text.size()));
  }
  return apply_config(config, facts);
}

Result<ModelFacts> facts_from_folder(const fs::path& folder, ModelFacts facts, std::string source) {
  LocalCheckpointFiles files(folder, source);
  facts.files = files.list();
  if (std::find(facts.files.begin(), facts.files.end(), "config.json") != facts.files.end()) {
    CANRUN_RETURN_IF_ERROR(apply_config_file(folder / "config.json", facts));
  }
  // The model card says the task where no Hub answers (offline, or a folder).
  if (std::find(facts.files.begin(), facts.files.end(), kModelCardFile) != facts.files.end()) {
    CANRUN_ASSIGN_OR_RETURN(const FileSlice card, files.read(kModelCardFile, 0, kMaxCardBytes));
    apply_model_card(card.bytes, facts);
  }
  CANRUN_RETURN_IF_ERROR(apply_pipeline_index(files, facts));
  CANRUN_ASSIGN_OR_RETURN(auto headers, read_checkpoint_headers(files, facts.files));
  apply_checkpoint(headers, facts);
  facts.weights_source = std::move(source);
  return facts;
}

}  // namespace

Status apply_pipeline_index(CheckpointFiles& files, ModelFacts& facts) {
  if (std::find(facts.files.begin(), facts.files.end(), kPipelineIndexFile) == facts.files.end())
    return ok_status();
  CANRUN_ASSIGN_OR_RETURN(const nlohmann::json index, read_pipeline_index(files));
  if (const auto name = index.find("_class_name"); name != index.end() && name->is_string()) {
    facts.pipeline_class = name->get<std::string>();
  }
  facts.foreign_components.clear();
  for (const PipelineComponent& component : pipeline_components(index)) {
    if (component.library == "diffusers" || component.library == "transformers") continue;
    facts.foreign_components.push_back(
        fmt::format("{}: {}.{}", component.name, component.library, component.class_name));
    const std::string module = component.library + ".py";
    for (const std::string& file : facts.files) {
      if (file == module || file == component.name + "/" + module) {
        facts.foreign_components_in_repo = true;
      }
    }
  }
  return ok_status();
}

Result<ModelFacts> fetch_model_info(HubClient& client, const ModelId& id,
                                    const Revision& revision) {
  const std::string path =
      revision == Revision::main_branch()
          ? fmt::format("/api/models/{}", id.str())
          : fmt::format("/api/models/{}/revision/{}", id.str(), url_encode(revision.str(), false));
  CANRUN_ASSIGN_OR_RETURN(const std::string text, client.get_text(path));
  CANRUN_ASSIGN_OR_RETURN(ModelFacts facts,
                          facts_from_model_info_text(text, client.config().endpoint + path));
  if (facts.model_id != id.str()) {
    // The Hub answers a renamed repo under its new name; keep the name the user gave.
    log::info("{} is now {} on the Hub", id.str(), facts.model_id);
  }
  facts.revision = revision.str();
  return facts;
}

Result<ModelFacts> fetch_model_facts(HubClient& client, const HfCache& cache, const ModelId& id,
                                     const Revision& revision) {
  if (client.config().offline) {
    auto cached = cached_model_facts(cache, id, revision);
    if (cached.ok()) return cached;
    if (!cached.error().has_reason(reason::kNotCached)) return cached.error();
    return Error(cached.error().code(), fmt::format("{} (and the Hub is not used: HF_HUB_OFFLINE)",
                                                    cached.error().message()))
        .with_reason(reason::kNotCached);
  }
  auto info = fetch_model_info(client, id, revision);
  if (!info.ok() && (info.error().code() == ErrorCode::kUnavailable ||
                     info.error().code() == ErrorCode::kTimeout)) {
    // As huggingface_hub does: the Hub out of reach, what the cache holds still answers.
    auto cached = cached_model_facts(cache, id, revision);
    if (!cached.ok()) {
      // One sentence that names the model once: the cache's answer, then the Hub's.
      return Error(cached.error().code(),
                   fmt::format("{}, and the Hub could not be reached ({})",
                               cached.error().message(), info.error().message()))
          .with_reason(cached.error().reason());
    }
    log::warning("{}; using the HF cache", info.error().message());
    return cached;
  }
  if (!info.ok()) return info.error();
  ModelFacts facts = std::move(info).value();
  Revision pinned = revision;
  if (!facts.sha.empty()) {
    CANRUN_ASSIGN_OR_RETURN(pinned, Revision::parse(facts.sha));
  }
  if (std::find(facts.files.begin(), facts.files.end(), "config.json") != facts.files.end()) {
    // Asked by the revision the user named, so that refs/<revision> is written as
    // huggingface_hub writes it and transformers finds the file by that name.
    CANRUN_ASSIGN_OR_RETURN(const CachedFile config,
                            download_to_cache(client, cache, id, revision, "config.json"));
    if (!facts.sha.empty() && config.commit != facts.sha) {
      log::warning("{}: {} moved from {} to {} while its facts were read", id.str(), revision.str(),
                   facts.sha, config.commit);
    }
    CANRUN_RETURN_IF_ERROR(apply_config_file(config.path, facts));
  }
  HubCheckpointFiles files(client, id, pinned.str());
  CANRUN_RETURN_IF_ERROR(apply_pipeline_index(files, facts));
  CANRUN_ASSIGN_OR_RETURN(auto headers, read_checkpoint_headers(files, facts.files));
  apply_checkpoint(headers, facts);
  facts.weights_source = "hub";
  return facts;
}

Result<ModelFacts> cached_model_facts(const HfCache& cache, const ModelId& id,
                                      const Revision& revision) {
  const auto snapshot = cache.snapshot_dir(id, revision);
  if (!snapshot) {
    return Error(ErrorCode::kUnavailable,
                 fmt::format("{} at {} is not in the HF cache {}", id.str(), revision.str(),
                             quote_for_message(cache.root().string())))
        .with_reason(reason::kNotCached);
  }
  ModelFacts facts;
  facts.model_id = id.str();
  facts.revision = revision.str();
  facts.sha = snapshot->filename().string();
  return facts_from_folder(*snapshot, std::move(facts), "hf-cache");
}

Result<ModelFacts> local_model_facts(const fs::path& folder, const std::optional<ModelId>& id) {
  std::error_code error;
  if (!fs::is_directory(folder, error)) {
    return not_found(
        fmt::format("checkpoint folder {} does not exist", quote_for_message(folder.string())));
  }
  ModelFacts facts;
  if (id) facts.model_id = id->str();
  return facts_from_folder(folder, std::move(facts), "local");
}

}  // namespace canrun::hub
