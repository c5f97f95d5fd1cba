// The parallel probe: asks the stack's own transformers whether a model type's config class
// defines a tensor-parallel plan (base_model_tp_plan) and an expert-parallel plan
// (base_model_ep_plan, usable only where DistributedConfig has enable_expert_parallel). The
// answer depends on the transformers version, so it is cached on disk per (transformers
// version, model type): DIR/transformers-<version>/<model_type>.v2.json (v2: the answer
// includes the DistributedConfig check).
//
// Thread safety: free functions; concurrent probes of one key both write the same file.
#pragma once

#include <filesystem>
#include <string>

#include "core/result.h"
#include "plan/planner.h"
#include "run/process.h"

namespace canrun::plan {

//! `library_version` is the stack's transformers version (from the stack probe), used as the
//! cache key without importing anything; a miss runs `python` once (a few seconds).
Result<ParallelSupport> probe_parallel_support(const std::string& python,
                                               const std::string& library_version,
                                               const std::string& model_type,
                                               const std::filesystem::path& cache_dir,
                                               run::ProcessLauncher& launcher);

}  // namespace canrun::plan
