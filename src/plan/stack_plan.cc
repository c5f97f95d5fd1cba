#include "plan/stack_plan.h"

#include <fmt/format.h>

#include "stack/parallel_support.h"

namespace canrun::plan {

Result<StackPlan> plan_on_stack(const hub::ModelFacts& facts, const stack::StackPython& python,
                                const std::string& library_version,
                                const backend::Topology& topology) {
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
        stack::probe_parallel_support(python, library_version, *facts.model_type));
  }
  plan.shards = plan_model(plan.input, plan.support, topology);
  return plan;
}

}  // namespace canrun::plan
