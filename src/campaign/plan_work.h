// Planning a campaign (SPEC.md §10: select → exclude → plan): which models of each task it
// tests, which it excludes and why, and on how many cores each of the others runs.
//
//   select   the curated list ∪ the top N of the Hub's downloads and trending rankings (from the
//            Hub or its snapshot), per task, deduplicated in a stable order; or an explicit list
//   exclude  by the rule of canrun test, plan and render (trial/exclusion.h): the curated
//            exclusions first; then, from the checkpoint as canrun test resolves it: gated (only
//            when the token in use has no access), remote_code (auto_map), incompatible,
//            unsupported_task (the model's pipeline_tag is not a task canrun tests), quantized
//            (quantization_config: the profile runs plain weights), no_safetensors; then the
//            planner's too_large / no_parallel_plan
//   plan     cores and parallelism as canrun plan gives them
//
// A model that cannot be resolved at all (not on the Hub, the Hub unreachable and not cached)
// is no verdict: it is listed in `unresolved` and left out of the work.
//
// Thread safety: one call at a time (it asks the Hub and the stack's Python).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "campaign/work.h"
#include "core/result.h"
#include "process/process.h"
#include "trial/trial.h"

namespace canrun::campaign {

struct Selection {
  std::vector<std::string> tasks;         //!< Hub pipeline tags
  std::filesystem::path selected_file;    //!< the curated list
  std::filesystem::path exclusions_file;  //!< the curated exclusions
  std::filesystem::path rankings_dir;     //!< snapshots, refreshed from the Hub when it answers
  std::size_t top = 0;                    //!< per ranking (downloads, trending); 0: none
  //! Set: exactly these, one "MODEL [TASK [CORES]]" a line (CORES: exactly that many, with the
  //! parallelism the stack offers there; the census lists its sharded runs so).
  std::filesystem::path models_file;
};

struct PlannedWork {
  std::vector<WorkItem> items;
  std::vector<std::string> unresolved;  //!< "model (task): why" (the model named once)
};

//! `trial` carries the backend, the stack's Python, memory overrides and the cache;
//! `library_version` is the stack's transformers; `machine_cores` (> 0) caps the cores a plan
//! may take at what this machine has for the profile (a plan it cannot place is too_large here).
Result<PlannedWork> plan_work(const Selection& selection, const trial::TrialRequest& trial,
                              const std::string& library_version, int machine_cores,
                              process::ProcessLauncher& launcher);

}  // namespace canrun::campaign
