// Planning a model for one stack: its facts (safetensors headers and config), what the stack's
// transformers offers for its architecture (the parallel probe, cached), and the planner.
// Shared by canrun plan and canrun test.
//
// Thread safety: as probe_parallel_support (the probe cache is written atomically).
#pragma once

#include <filesystem>
#include <string>

#include "backend/profile.h"
#include "core/result.h"
#include "hub/model_facts.h"
#include "plan/planner.h"
#include "run/process.h"

namespace canrun::plan {

struct StackPlan {
  PlanFacts input;
  ParallelSupport support;
  PlannedShards shards;
};

//! kNotFound for a model without safetensors weights (nothing to plan) or a probe that fails.
Result<StackPlan> plan_on_stack(const hub::ModelFacts& facts, const std::string& python,
                                const std::string& library_version,
                                const backend::Topology& topology,
                                const std::filesystem::path& probe_cache,
                                run::ProcessLauncher& launcher);

}  // namespace canrun::plan
