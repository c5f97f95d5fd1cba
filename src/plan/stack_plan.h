// Planning a model for one stack: its facts (safetensors headers and config), what the stack's
// transformers offers for its architecture (the parallel probe, cached), and the planner.
// Shared by canrun plan and canrun test.
//
// Thread safety: as probe_parallel_support (the probe cache is written atomically).
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "backend/profile.h"
#include "core/result.h"
#include "hub/model_facts.h"
#include "plan/planner.h"
#include "stack/python.h"

namespace canrun::plan {

struct StackPlan {
  PlanFacts input;
  ParallelSupport support;
  PlannedShards shards;

  friend bool operator==(const StackPlan&, const StackPlan&) = default;
};

//! The plan as a campaign keeps it (work.json): its input, the stack's support and the answer.
nlohmann::json stack_plan_to_json(const StackPlan& plan);
//! kCorrupt naming `where` and the field for anything stack_plan_to_json does not write.
Result<StackPlan> stack_plan_from_json(const nlohmann::json& json, std::string_view where);

//! kNotFound for a model without safetensors weights (nothing to plan) or a probe that fails.
Result<StackPlan> plan_on_stack(const hub::ModelFacts& facts, const stack::StackPython& python,
                                const std::string& library_version,
                                const backend::Topology& topology);

}  // namespace canrun::plan
