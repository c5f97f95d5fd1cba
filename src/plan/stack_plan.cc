#include "plan/stack_plan.h"

#include <fmt/format.h>

#include "core/json_fields.h"
#include "core/json_output.h"
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
  plan.support = {false, false, false, library_version, std::nullopt};
  if (facts.model_type) {
    CANRUN_ASSIGN_OR_RETURN(
        plan.support, stack::probe_parallel_support(python, library_version, *facts.model_type));
  }
  plan.shards = plan_model(plan.input, plan.support, topology);
  return plan;
}

namespace {

using nlohmann::json;

//! A JSON object's member, which must be an object.
Result<const json*> object_member(const json& object, std::string_view where,
                                  std::string_view field) {
  const auto found = object.find(field);
  if (found == object.end()) return corrupt(fmt::format("{}: no field \"{}\"", where, field));
  if (!found->is_object()) return json_field_type_error(where, field, *found, "an object");
  return &*found;
}

//! A non-negative integer that must be there.
Result<std::uint64_t> required_bytes(const json& object, std::string_view where,
                                     std::string_view field) {
  std::optional<std::int64_t> count;
  CANRUN_RETURN_IF_ERROR(read_json_count(object, where, field, count));
  if (!count) return corrupt(fmt::format("{}: no field \"{}\"", where, field));
  return static_cast<std::uint64_t>(*count);
}

}  // namespace

json stack_plan_to_json(const StackPlan& plan) {
  const PlanFacts& input = plan.input;
  const ParallelSupport& support = plan.support;
  const PlannedShards& shards = plan.shards;
  return {{"input",
           {{"weights_bytes", input.weights_bytes},
            {"expert_weights_bytes", input.expert_weights_bytes},
            {"num_attention_heads", optional_json(input.num_attention_heads)},
            {"num_key_value_heads", optional_json(input.num_key_value_heads)},
            {"num_experts", optional_json(input.num_experts)},
            {"model_type", input.model_type}}},
          {"support",
           {{"known_model_type", support.known_model_type},
            {"tp_plan", support.tp_plan},
            {"ep_plan", support.ep_plan},
            {"fullgraph", optional_json(support.fullgraph)},
            {"library_version", support.library_version}}},
          {"shards",
           {{"placed", shards.placed},
            {"cores", shards.cores},
            {"parallelism", to_string(shards.parallelism)},
            {"exclusion", shards.exclusion},
            {"weights_bytes", shards.weights_bytes},
            {"per_core_bytes", shards.per_core_bytes},
            {"budget_bytes", shards.budget_bytes},
            {"why", shards.why}}}};
}

Result<StackPlan> stack_plan_from_json(const json& object, std::string_view where) {
  if (!object.is_object()) return corrupt(fmt::format("{}: the plan must be an object", where));
  StackPlan plan;
  const std::string in_input = fmt::format("{} (input)", where);
  CANRUN_ASSIGN_OR_RETURN(const json* input, object_member(object, where, "input"));
  CANRUN_ASSIGN_OR_RETURN(plan.input.weights_bytes,
                          required_bytes(*input, in_input, "weights_bytes"));
  CANRUN_ASSIGN_OR_RETURN(plan.input.expert_weights_bytes,
                          required_bytes(*input, in_input, "expert_weights_bytes"));
  CANRUN_RETURN_IF_ERROR(
      read_json_count(*input, in_input, "num_attention_heads", plan.input.num_attention_heads));
  CANRUN_RETURN_IF_ERROR(
      read_json_count(*input, in_input, "num_key_value_heads", plan.input.num_key_value_heads));
  CANRUN_RETURN_IF_ERROR(read_json_count(*input, in_input, "num_experts", plan.input.num_experts));
  CANRUN_RETURN_IF_ERROR(read_json_string(*input, in_input, "model_type", plan.input.model_type));

  const std::string in_support = fmt::format("{} (support)", where);
  CANRUN_ASSIGN_OR_RETURN(const json* support, object_member(object, where, "support"));
  CANRUN_RETURN_IF_ERROR(
      read_json_bool(*support, in_support, "known_model_type", plan.support.known_model_type));
  CANRUN_RETURN_IF_ERROR(read_json_bool(*support, in_support, "tp_plan", plan.support.tp_plan));
  CANRUN_RETURN_IF_ERROR(read_json_bool(*support, in_support, "ep_plan", plan.support.ep_plan));
  // Absent from plans kept before the probe asked for it.
  if (const auto fullgraph = support->find("fullgraph");
      fullgraph != support->end() && !fullgraph->is_null()) {
    if (!fullgraph->is_boolean()) {
      return json_field_type_error(in_support, "fullgraph", *fullgraph, "a boolean or null");
    }
    plan.support.fullgraph = fullgraph->get<bool>();
  }
  CANRUN_RETURN_IF_ERROR(
      read_json_string(*support, in_support, "library_version", plan.support.library_version));

  const std::string in_shards = fmt::format("{} (shards)", where);
  CANRUN_ASSIGN_OR_RETURN(const json* shards, object_member(object, where, "shards"));
  PlannedShards& out = plan.shards;
  CANRUN_RETURN_IF_ERROR(read_json_bool(*shards, in_shards, "placed", out.placed));
  std::int64_t cores = 0;
  CANRUN_RETURN_IF_ERROR(read_json_integer(*shards, in_shards, "cores", cores));
  out.cores = static_cast<int>(cores);
  std::string parallelism = "none";
  CANRUN_RETURN_IF_ERROR(read_json_string(*shards, in_shards, "parallelism", parallelism));
  auto parsed = parse_parallelism(parallelism, fmt::format("{}: parallelism", in_shards));
  if (!parsed.ok()) return corrupt(parsed.error().message());
  out.parallelism = *parsed;
  CANRUN_RETURN_IF_ERROR(read_json_string(*shards, in_shards, "exclusion", out.exclusion));
  CANRUN_ASSIGN_OR_RETURN(out.weights_bytes, required_bytes(*shards, in_shards, "weights_bytes"));
  CANRUN_ASSIGN_OR_RETURN(out.per_core_bytes, required_bytes(*shards, in_shards, "per_core_bytes"));
  CANRUN_ASSIGN_OR_RETURN(out.budget_bytes, required_bytes(*shards, in_shards, "budget_bytes"));
  CANRUN_RETURN_IF_ERROR(read_json_string(*shards, in_shards, "why", out.why));
  return plan;
}

}  // namespace canrun::plan
