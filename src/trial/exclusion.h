// Which models are not run, and why (SPEC.md §7): the one rule that canrun test, plan, render
// and a campaign's planning (campaign/plan_work.h) apply, step by step, in this order:
//
//   curated            a rule of the curated exclusions (catalog/exclusions.toml) matches the id
//   gated              resolving it fails because the token in use has no access
//   checkpoint         what the resolved checkpoint is, for the task: remote_code (auto_map; a
//                      pipeline component of the repo's own code), incompatible (a pipeline
//                      component of another library), unsupported_task (no recipe for the
//                      task, or the model's pipeline tag names a task canrun does not test),
//                      quantized (quantization_config: profiles run plain weights),
//                      no_safetensors
//   planning           too_large, no_parallel_plan (trial::plan_trial)
//
// Each gives a reason (a category of SPEC.md §7) and one sentence that does not repeat it.
// And when the task is not given, the model says which it is (task_of_model).
//
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "backend/profile.h"
#include "catalog/exclusions.h"
#include "core/model_id.h"
#include "core/result.h"
#include "hub/model_facts.h"
#include "trial/checkpoint.h"

namespace canrun::trial {

struct Exclusion {
  std::string reason;  //!< a category of SPEC.md §7
  std::string why;     //!< one sentence, without the reason in front
};

//! The curated rule that matches `id`, if any ("note" rules too: a campaign records them).
std::optional<Exclusion> curated_exclusion(const catalog::Exclusions& exclusions,
                                           const ModelId& id);

//! The exclusion an error resolving a checkpoint stands for: gated (the Hub gates the model and
//! the token in use has no access); none for any other error (the model is not resolved).
std::optional<Exclusion> resolve_exclusion(const Error& error);

//! The exclusion a resolved checkpoint gets for `task` before planning, if any (see above).
std::optional<Exclusion> checkpoint_exclusion(const Checkpoint& checkpoint, std::string_view task,
                                              const backend::BackendProfile& profile);

//! The task a model is tested for when none is given, and why, in words for one line.
struct ModelTask {
  std::string task;  //!< a Hub pipeline tag (one canrun may have no recipe for)
  std::string why;   //!< e.g. "from model_index.json (StableDiffusionPipeline)"
};

//! The model's task, from the first of: its pipeline tag (the Hub's model info, or the model
//! card's front matter in the HF cache or folder), a diffusers pipeline's model_index.json,
//! a sentence-transformers model's modules.json, the architecture config.json names
//! (…ForCausalLM: text-generation; …ForConditionalGeneration with a vision_config:
//! image-text-to-text; …ForSequenceClassification, …ForMaskedLM, …ForTokenClassification; a
//! bare …Model: feature-extraction); else text-generation, saying that it is the default.
ModelTask task_of_model(const hub::ModelFacts& facts);

}  // namespace canrun::trial
