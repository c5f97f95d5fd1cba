#include "campaign/work.h"

#include <fmt/format.h>

#include "core/json_fields.h"
#include "core/model_id.h"

namespace canrun::campaign {

nlohmann::json work_item_to_json(const WorkItem& item) {
  nlohmann::json json = {
      {"model_id", item.model_id.str()},
      {"task", item.task},
      {"revision", item.revision},
      {"source", item.source},
      {"exclusion_reason",
       item.exclusion_reason ? nlohmann::json(*item.exclusion_reason) : nlohmann::json()},
      {"why", item.why},
      {"cores", item.cores},
      {"parallelism", to_string(item.parallelism)},
      {"weights_bytes", item.weights_bytes},
      {"expected_s", item.expected_s}};
  if (item.checkpoint) json["checkpoint"] = trial::kept_checkpoint_to_json(*item.checkpoint);
  if (item.stack_plan) json["stack_plan"] = plan::stack_plan_to_json(*item.stack_plan);
  return json;
}

Result<WorkItem> work_item_from_json(const nlohmann::json& json) {
  constexpr std::string_view kWhere = "work item";
  if (!json.is_object()) return corrupt("a work item must be a JSON object");
  CANRUN_ASSIGN_OR_RETURN(const std::string model_id,
                          required_json_string(json, kWhere, "model_id"));
  auto id = ModelId::parse(model_id);
  if (!id.ok()) return corrupt(fmt::format("work item: {}", id.error().message()));
  CANRUN_ASSIGN_OR_RETURN(std::string task, required_json_string(json, kWhere, "task"));
  WorkItem item(std::move(*id), std::move(task));
  CANRUN_RETURN_IF_ERROR(read_json_string(json, kWhere, "revision", item.revision));
  CANRUN_RETURN_IF_ERROR(read_json_string(json, kWhere, "source", item.source));
  CANRUN_RETURN_IF_ERROR(read_json_string(json, kWhere, "exclusion_reason", item.exclusion_reason));
  CANRUN_RETURN_IF_ERROR(read_json_string(json, kWhere, "why", item.why));
  std::optional<std::int64_t> cores;
  CANRUN_RETURN_IF_ERROR(read_json_count(json, kWhere, "cores", cores));
  item.cores = static_cast<int>(cores.value_or(1));
  std::string parallelism = "none";
  CANRUN_RETURN_IF_ERROR(read_json_string(json, kWhere, "parallelism", parallelism));
  auto parsed = parse_parallelism(parallelism, "work item: parallelism");
  if (!parsed.ok()) return corrupt(parsed.error().message());
  item.parallelism = *parsed;
  std::optional<std::int64_t> weights;
  CANRUN_RETURN_IF_ERROR(read_json_count(json, kWhere, "weights_bytes", weights));
  item.weights_bytes = static_cast<std::uint64_t>(weights.value_or(0));
  CANRUN_RETURN_IF_ERROR(read_json_number(json, kWhere, "expected_s", item.expected_s));
  const std::string where = fmt::format("work item {}", item.key());
  if (const auto kept = json.find("checkpoint"); kept != json.end() && !kept->is_null()) {
    CANRUN_ASSIGN_OR_RETURN(item.checkpoint, trial::kept_checkpoint_from_json(*kept, where));
  }
  if (const auto plan = json.find("stack_plan"); plan != json.end() && !plan->is_null()) {
    CANRUN_ASSIGN_OR_RETURN(item.stack_plan, plan::stack_plan_from_json(*plan, where));
  }
  return item;
}

}  // namespace canrun::campaign
