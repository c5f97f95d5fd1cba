#include "trial/checkpoint.h"

#include <fmt/format.h>

#include <set>

#include "core/json_fields.h"
#include "core/json_output.h"
#include "core/text.h"
#include "hub/checkpoint_files.h"
#include "hub/facts_reader.h"
#include "hub/hf_cache.h"
#include "hub/hub_client.h"
#include "hub/local_model.h"

namespace canrun::trial {
namespace {

namespace fs = std::filesystem;

//! Facts, or the no_safetensors exclusion kept aside; every other error is returned.
Status take_facts(Result<hub::ModelFacts> facts, Checkpoint& checkpoint) {
  if (facts.ok()) {
    checkpoint.facts = std::move(*facts);
    return ok_status();
  }
  if (!facts.error().has_reason(reason::kNoSafetensors)) return facts.error();
  checkpoint.no_safetensors = facts.error();
  return ok_status();
}

//! Whether a checkpoint folder says what it is: a model's config.json, or a diffusers
//! pipeline's model_index.json.
bool has_model_config(const fs::path& folder) {
  return fs::is_regular_file(folder / "config.json") ||
         fs::is_regular_file(folder / hub::kPipelineIndexFile);
}

//! The weights files the facts' tensors lie in: sorted, each once.
std::vector<std::string> weights_files_of(const hub::ModelFacts& facts) {
  std::set<std::string> files;
  for (const auto& tensor : facts.tensors) files.insert(tensor.file);
  return {files.begin(), files.end()};
}

//! The snapshot of `commit` when it holds config.json and every weights file.
std::optional<fs::path> complete_snapshot(const hub::HfCache& cache, const ModelId& id,
                                          const std::string& commit,
                                          const std::vector<std::string>& weights_files) {
  auto revision = Revision::parse(commit);
  if (!revision.ok()) return std::nullopt;
  const auto snapshot = cache.snapshot_dir(id, *revision);
  if (!snapshot || !has_model_config(*snapshot)) return std::nullopt;
  for (const std::string& file : weights_files) {
    if (!fs::exists(*snapshot / file)) return std::nullopt;
  }
  return snapshot;
}

Result<Checkpoint> resolve_folder(const CheckpointQuery& query) {
  CANRUN_ASSIGN_OR_RETURN(const fs::path given, hub::model_folder(query.model));
  Checkpoint checkpoint;
  checkpoint.source = CheckpointSource::kFolder;
  const fs::path folder = hub::normal_folder(given);
  checkpoint.model_id = query.folder_id ? query.folder_id->str() : hub::local_model_id(folder);
  checkpoint.load_from = folder.string();
  checkpoint.revision = query.revision;
  checkpoint.folder = folder;
  CANRUN_RETURN_IF_ERROR(take_facts(hub::local_model_facts(folder, query.folder_id), checkpoint));
  if (checkpoint.facts.model_id.empty()) checkpoint.facts.model_id = checkpoint.model_id;
  return checkpoint;
}

Result<Checkpoint> resolve_hub_id(const CheckpointQuery& query, const Revision& revision) {
  CANRUN_ASSIGN_OR_RETURN(ModelId id, ModelId::parse(query.model));
  CANRUN_ASSIGN_OR_RETURN(hub::HubConfig config, hub::HubConfig::from_environment());
  const hub::HfCache cache = hub::HfCache::from_environment();
  hub::HubClient client(std::move(config),
                        hub::make_curl_transport(hub::default_transport_options()));
  Checkpoint checkpoint;
  checkpoint.model_id = id.str();
  checkpoint.load_from = id.str();
  checkpoint.revision = revision.str();
  auto facts = hub::fetch_model_facts(client, cache, id, revision);
  if (!facts.ok() && !facts.error().has_reason(reason::kNoSafetensors)) {
    // Named once: most answers name the model already ("<id> at main is not in the HF cache").
    const Error& error = facts.error();
    return error.message().find(id.str()) == std::string::npos ? error.with_context(id.str())
                                                               : error;
  }
  CANRUN_RETURN_IF_ERROR(take_facts(std::move(facts), checkpoint));
  checkpoint.source = checkpoint.facts.weights_source == "hub" ? CheckpointSource::kHub
                                                               : CheckpointSource::kHfCache;
  std::optional<std::string> commit;
  if (!checkpoint.facts.sha.empty()) commit = checkpoint.facts.sha;
  if (!commit) commit = cache.commit_of(id, revision);
  if (commit) {
    checkpoint.commit = commit;
    checkpoint.revision = *commit;
    checkpoint.folder = complete_snapshot(cache, id, *commit, weights_files_of(checkpoint.facts));
    if (checkpoint.folder) checkpoint.source = CheckpointSource::kHfCache;
  }
  return checkpoint;
}

}  // namespace

bool is_folder(std::string_view model) { return hub::names_folder(model); }

Result<Checkpoint> resolve_checkpoint(const CheckpointQuery& query) {
  CANRUN_ASSIGN_OR_RETURN(Revision revision, Revision::parse(query.revision));
  if (is_folder(query.model)) return resolve_folder(query);
  return resolve_hub_id(query, revision);
}

KeptCheckpoint keep(const Checkpoint& checkpoint) {
  return {checkpoint.model_id,
          checkpoint.load_from,
          checkpoint.revision,
          checkpoint.commit,
          checkpoint.source == CheckpointSource::kFolder,
          weights_files_of(checkpoint.facts)};
}

Checkpoint located(const KeptCheckpoint& kept) {
  Checkpoint checkpoint;
  checkpoint.model_id = kept.model_id;
  checkpoint.load_from = kept.load_from;
  checkpoint.revision = kept.revision;
  checkpoint.commit = kept.commit;
  if (kept.folder) {
    checkpoint.source = CheckpointSource::kFolder;
    checkpoint.folder = fs::path(kept.load_from);
    return checkpoint;
  }
  checkpoint.source = CheckpointSource::kHub;
  auto id = ModelId::parse(kept.model_id);
  if (id.ok() && kept.commit) {
    checkpoint.folder =
        complete_snapshot(hub::HfCache::from_environment(), *id, *kept.commit, kept.weights_files);
    if (checkpoint.folder) checkpoint.source = CheckpointSource::kHfCache;
  }
  return checkpoint;
}

nlohmann::json kept_checkpoint_to_json(const KeptCheckpoint& kept) {
  return {{"model_id", kept.model_id}, {"load_from", kept.load_from},
          {"revision", kept.revision}, {"commit", optional_json(kept.commit)},
          {"folder", kept.folder},     {"weights_files", kept.weights_files}};
}

Result<KeptCheckpoint> kept_checkpoint_from_json(const nlohmann::json& json,
                                                 std::string_view where) {
  if (!json.is_object()) return corrupt(fmt::format("{}: the checkpoint must be an object", where));
  KeptCheckpoint kept;
  CANRUN_ASSIGN_OR_RETURN(kept.model_id, required_json_string(json, where, "model_id"));
  CANRUN_ASSIGN_OR_RETURN(kept.load_from, required_json_string(json, where, "load_from"));
  CANRUN_ASSIGN_OR_RETURN(kept.revision, required_json_string(json, where, "revision"));
  CANRUN_RETURN_IF_ERROR(read_json_string(json, where, "commit", kept.commit));
  CANRUN_RETURN_IF_ERROR(read_json_bool(json, where, "folder", kept.folder));
  CANRUN_RETURN_IF_ERROR(read_json_string_list(json, where, "weights_files", kept.weights_files));
  if (!kept.folder) {
    if (auto id = ModelId::parse(kept.model_id); !id.ok()) {
      return corrupt(fmt::format("{}: {}", where, id.error().message()));
    }
  }
  return kept;
}

Status require_local_files(const Checkpoint& checkpoint) {
  if (checkpoint.source == CheckpointSource::kFolder) {
    if (!has_model_config(*checkpoint.folder)) {
      return not_found(fmt::format("folder {} has no config.json (nor a pipeline's {})",
                                   quote_for_message(checkpoint.load_from),
                                   hub::kPipelineIndexFile));
    }
    return ok_status();
  }
  if (checkpoint.folder) return ok_status();
  return not_found(fmt::format("{} at {} is not in the HF cache (the Hub has it, but canrun test "
                               "runs what is on this machine); download it first, e.g. `hf "
                               "download {} --revision {}`",
                               checkpoint.model_id, checkpoint.revision, checkpoint.model_id,
                               checkpoint.revision))
      .with_reason(reason::kNotCached);
}

}  // namespace canrun::trial
