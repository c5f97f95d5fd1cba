// Gathering ModelFacts: from the Hub (model info, config.json into the HF cache, safetensors
// headers by range requests), from the HF cache alone (offline), or from a local folder.
//
// Thread safety: as HubClient.
#pragma once

#include <filesystem>
#include <optional>

#include "core/model_id.h"
#include "core/result.h"
#include "hub/checkpoint_files.h"
#include "hub/hf_cache.h"
#include "hub/hub_client.h"
#include "hub/model_facts.h"

namespace canrun::hub {

//! /api/models/{id} (or /revision/{rev}) parsed into the Hub fields of ModelFacts.
Result<ModelFacts> fetch_model_info(HubClient& client, const ModelId& id, const Revision& revision);

//! Everything: model info, then config.json (cached in the HF cache) and the safetensors
//! headers at the commit the info names. Offline, or when the Hub cannot be reached, the
//! facts come from the HF cache (cached_model_facts).
Result<ModelFacts> fetch_model_facts(HubClient& client, const HfCache& cache, const ModelId& id,
                                     const Revision& revision);

//! Facts from the snapshot of `revision` in the HF cache (config.json and safetensors files
//! present there); the file list is what the snapshot holds.
Result<ModelFacts> cached_model_facts(const HfCache& cache, const ModelId& id,
                                      const Revision& revision);

//! A diffusers pipeline's facts (ModelFacts::foreign_components) from its model_index.json,
//! read through `files` when facts.files lists it; nothing to do for other repos.
Status apply_pipeline_index(CheckpointFiles& files, ModelFacts& facts);

//! Facts from a local checkpoint folder (config.json optional); `id` names it when known.
Result<ModelFacts> local_model_facts(const std::filesystem::path& folder,
                                     const std::optional<ModelId>& id);

}  // namespace canrun::hub
