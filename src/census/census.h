// The architecture census: every model type the stack's transformers maps to a task, built as a
// tiny random-weight checkpoint and tested like any model, on one core and sharded.
//
//   build     census/build_checkpoints.py (embedded), run once with the stack's own Python,
//             builds what is missing into the census's HF cache of that transformers version,
//             <cache>/census/hf/transformers-<version>, and writes its manifest there: each type
//             built (canrun-census/<type>, its revision), belonging to another task, or failed
//             (the step and the error), with what transformers claims for it
//   record    a type not built is an EXCLUDED row at once: `other_task` or `build_failed`
//   one core  a campaign (campaign/local_campaign.h) of every type built, on one core, in
//             DATASET/.census/<backend>/transformers-<version>/<tasks>/one-core (<tasks>: the
//             tasks joined by "+"): packing, resume, logs, verdicts against the CPU reference as
//             any campaign's
//   sharded   for text generation, every type that PASSed on one core, as
//             canrun-census-sharded/<type> (the same snapshot under a second id, so that its
//             row does not replace the one-core row) over `shard_cores` cores with the
//             parallelism the stack offers there (plan::plan_at_degree: TP with a plan, EP for a
//             mixture of experts with only an EP plan, else no_parallel_plan without running),
//             in .../sharded; random weights write no English, so the teacher-forced agreement
//             with the CPU reference decides (TrialRequest::agreement_decides), not the judge
//
// The census dataset is a dataset folder of its own (a file census.json marks it, and its card
// says what a census verdict means); every dataset command reads it.
//
// Thread safety: run_census is called from one thread (it sets HF_HOME and HF_HUB_OFFLINE in
// the process's environment for the campaigns it runs).
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "campaign/local_campaign.h"
#include "census/census_ids.h"
#include "core/result.h"
#include "process/process.h"
#include "trial/trial.h"

namespace canrun::census {

//! The tasks the census builds checkpoints for (the generator's mappings).
inline constexpr std::string_view kTasks[] = {"text-generation", "text-classification", "fill-mask",
                                              "token-classification"};

struct CensusOptions {
  //! backend, the stack's Python, cache, timeout; the census sets agreement_decides itself.
  trial::TrialRequest trial;
  std::vector<std::string> tasks;
  std::vector<std::string> types;         //!< empty: every type of the tasks' mappings
  std::filesystem::path out;              //!< the census dataset
  std::filesystem::path exclusions_file;  //!< the campaigns' curated exclusions
  std::filesystem::path overrides_file;   //!< empty: the shipped census/overrides.json
  bool resume = false;
  int max_cores = 0;  //!< 0: all
  int shard_cores = 2;
};

//! What transformers claims for a model type, as the generator read it.
struct Claims {
  std::optional<bool> fullgraph;
  bool tp_plan = false;
  bool ep_plan = false;
};

//! One type of one task in the generator's manifest.
struct TypeEntry {
  std::string model_type;
  std::string task;
  std::string status;      //!< "built", "other_task" or "failed"
  std::string kind;        //!< decoder-only, encoder, encoder-decoder, multimodal, draft-model
  std::string other_task;  //!< for other_task
  std::string model_id;    //!< canrun-census/<type>[-<task>]
  std::string revision;    //!< when built
  std::string step;        //!< where it failed
  std::string error;
  Claims claims;
  double build_seconds = 0;
};

struct Manifest {
  std::string transformers;
  std::size_t planned = 0;
  std::vector<TypeEntry> entries;
};

//! The generator's manifest; kCorrupt naming the field for anything it does not write.
Result<Manifest> parse_manifest(const nlohmann::json& json);

//! The census's own id of a type for a task: canrun-census/<type> (text generation) or
//! canrun-census/<type>-<task>.
std::string census_model_id(const std::string& model_type, const std::string& task);

//! The EXCLUDED row of a type that was not built (other_task or build_failed), with its model
//! type and claims.
dataset::VerdictRow not_built_row(const TypeEntry& entry, const backend::BackendProfile& profile,
                                  const stack::Stack& stack);

struct CensusOutcome {
  std::string library_version;
  Manifest manifest;
  double build_s = 0;
  campaign::CampaignOutcome one_core;
  std::optional<campaign::CampaignOutcome> sharded;  //!< none: no type to shard
  std::vector<dataset::VerdictRow> not_built;
};

//! The census. kInvalidArgument for a task without census mapping or a type the stack's
//! transformers does not map to the tasks (named), before anything is built or run.
Result<CensusOutcome> run_census(const CensusOptions& options, process::ProcessLauncher& launcher,
                                 campaign::CampaignObserver& observer,
                                 const std::atomic<bool>& stop);

}  // namespace canrun::census
