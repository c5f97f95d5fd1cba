#include "plan/stack_plan.h"

#include <fmt/format.h>

#include "plan/parallel_probe.h"

namespace canrun::plan {

Result<StackPlan> plan_on_stack(const hub::ModelFacts& facts, const std::string& python,
                                const std::string& library_version,
                                const backend::Topology& topology,
                                const std::filesystem::path& probe_cache,
                                run::ProcessLauncher& launcher) {
  if (facts.weights_bytes == 0) {
    return not_found(
        fmt::format("{}: no safetensors weights found, so nothing to plan", facts.model_id));
  }
  StackPlan plan;
  plan.input = {facts.weights_bytes,       facts.expert_weights_bytes,
                facts.num_attention_heads, facts.num_key_value_heads,
                facts.num_experts,         facts.model_type.value_or("")};
  plan.support = {false, false, false, library_version};
  if (facts.model_type) {
    CANRUN_ASSIGN_OR_RETURN(
        plan.support,
        probe_parallel_support(python, library_version, *facts.model_type, probe_cache, launcher));
  }
  plan.shards = plan_model(plan.input, plan.support, topology);
  return plan;
}

}  // namespace canrun::plan
