// Where a model's files come from for a test: a local folder, or the local Hugging Face cache
// (the HF_HOME layout huggingface_hub and transformers share: hub/models--org--name/ with
// refs/<branch> → commit and snapshots/<commit>/).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"

namespace canrun::run {

struct ModelSource {
  std::string model_id;   //!< Hub id, or "local/<folder name>" for a folder
  std::string load_from;  //!< what from_pretrained gets: the Hub id, or the folder's path
  std::string revision;   //!< commit when known, else the branch or tag asked for
  std::optional<std::string> commit;
  std::filesystem::path folder;  //!< the files on disk
  bool from_hf_cache = false;    //!< run with HF_HUB_OFFLINE=1: the cache has it all
};

//! The hub cache folder: $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub.
std::filesystem::path hf_hub_cache();

//! `model` is a folder (holding config.json) or a Hub id found in the HF cache at `revision`.
//! kNotFound says where it looked; kInvalidArgument for a malformed id or revision.
Result<ModelSource> resolve_model(std::string_view model, std::string_view revision);

}  // namespace canrun::run
