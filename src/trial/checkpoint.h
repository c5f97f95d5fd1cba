// Resolving MODEL, the first step of every command that takes one (canrun test, plan, render,
// hub info): one rule for all of them.
//
//   a folder   MODEL looks like a path (./, ../, / or ~ first) or names a directory
//              (hub::names_folder): read as it is (its config.json and safetensors headers);
//              its id is "local/<folder name>" unless given. A path that is no directory is
//              kNotFound "no such folder: MODEL", never read as a Hub id.
//   a Hub id   online, the Hub says which commit the revision is (model info), config.json is
//              fetched into the HF cache (conditional request) and the safetensors headers are
//              read by range requests, or from the HF cache when it holds that commit's weights;
//              offline (HF_HUB_OFFLINE) or when the Hub cannot be reached, the HF cache answers
//              alone, as huggingface_hub does.
//
// A checkpoint whose repo has no safetensors weights resolves (the test records it as EXCLUDED)
// with `no_safetensors` set; other problems are errors. Whether the files are on this machine
// (`folder`) is part of the answer: a test needs them, a plan does not.
//
// Thread safety: free functions; each call makes its own Hub client.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/model_id.h"
#include "core/result.h"
#include "hub/model_facts.h"

namespace canrun::trial {

enum class CheckpointSource { kFolder, kHfCache, kHub };

struct Checkpoint {
  std::string model_id;   //!< Hub id, or "local/<folder name>" for a folder
  std::string load_from;  //!< what from_pretrained gets: the Hub id, or the folder's path
  std::string revision;   //!< the commit when known, else the branch or tag asked for
  std::optional<std::string> commit;
  //! The files on this machine: the folder, or the HF cache snapshot of the commit when it
  //! holds config.json and the weights. None: only on the Hub.
  std::optional<std::filesystem::path> folder;
  CheckpointSource source = CheckpointSource::kFolder;
  hub::ModelFacts facts;  //!< config and safetensors facts; empty when no_safetensors is set
  std::optional<Error> no_safetensors;  //!< the repo has no safetensors weights (reason kept)

  //! from_pretrained may run offline (HF_HUB_OFFLINE=1): the HF cache holds what it needs.
  bool in_hf_cache() const { return source != CheckpointSource::kFolder && folder.has_value(); }
};

struct CheckpointQuery {
  std::string model;  //!< Hub id or local folder
  std::string revision = "main";
  std::optional<ModelId> folder_id;  //!< the Hub id a folder holds, when the user names it
};

Result<Checkpoint> resolve_checkpoint(const CheckpointQuery& query);

//! A resolved checkpoint as a campaign keeps it for its runs (work.json), here or on another
//! node: what loads it, at which commit, where it came from and which weights files it has;
//! not its facts (planning read them) nor where its files lie (each machine looks in its own
//! HF cache: located()).
struct KeptCheckpoint {
  std::string model_id;
  std::string load_from;
  std::string revision;
  std::optional<std::string> commit;
  bool folder = false;                     //!< a local folder (load_from), not a Hub id
  std::vector<std::string> weights_files;  //!< relative to the repo, sorted, each once

  friend bool operator==(const KeptCheckpoint&, const KeptCheckpoint&) = default;
};

//! What of `checkpoint` a campaign keeps; it must have resolved with weights (not
//! no_safetensors).
KeptCheckpoint keep(const Checkpoint& checkpoint);

//! The kept checkpoint back, without asking the Hub: a folder as it is; a Hub id with its files
//! looked for in this machine's HF cache (the snapshot of its commit holding config.json and
//! every weights file), else only on the Hub (require_local_files says so). Its facts are empty.
Checkpoint located(const KeptCheckpoint& kept);

nlohmann::json kept_checkpoint_to_json(const KeptCheckpoint& kept);
//! kCorrupt naming `where` and the field for anything kept_checkpoint_to_json does not write.
Result<KeptCheckpoint> kept_checkpoint_from_json(const nlohmann::json& json,
                                                 std::string_view where);

//! Whether MODEL names a local folder (hub::names_folder), existing or not.
bool is_folder(std::string_view model);

//! A test needs the files here: kNotFound (reason kNotCached) saying how to get them when the
//! checkpoint is only on the Hub, or a folder without config.json. canrun test does not
//! download checkpoints; a campaign fetches them ahead of its runs.
Status require_local_files(const Checkpoint& checkpoint);

}  // namespace canrun::trial
