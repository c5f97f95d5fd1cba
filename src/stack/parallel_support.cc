#include "stack/parallel_support.h"

#include <fmt/format.h>

#include "core/text.h"

namespace canrun::stack {
namespace {

constexpr const char* kProbe = R"(
import json, sys
import transformers
from transformers.models.auto.configuration_auto import CONFIG_MAPPING
model_type = sys.argv[1]
answer = {"transformers": transformers.__version__, "model_type": model_type, "known": False,
          "tp_plan": False, "ep_plan": False}
try:  # expert parallel is asked for through DistributedConfig(enable_expert_parallel=True)
    from transformers.distributed.configuration_utils import DistributedConfig
    ep_switch = "enable_expert_parallel" in getattr(DistributedConfig, "__dataclass_fields__", {})
except ImportError:
    ep_switch = False
if model_type in CONFIG_MAPPING:
    config = CONFIG_MAPPING[model_type]()
    answer.update(known=True, tp_plan=bool(getattr(config, "base_model_tp_plan", None)),
                  ep_plan=ep_switch and bool(getattr(config, "base_model_ep_plan", None)))
print(json.dumps(answer))
)";

bool is_answer(const nlohmann::json& json) {
  return json.is_object() && json.value("known", nlohmann::json()).is_boolean();
}

}  // namespace

Result<ParallelSupport> probe_parallel_support(const StackPython& python,
                                               const std::string& library_version,
                                               const std::string& model_type) {
  if (!is_safe_name(model_type)) {
    return invalid_argument(
        fmt::format("model_type {} is not a model type name", quote_for_message(model_type)));
  }
  if (!is_safe_name(library_version)) {
    return invalid_argument(fmt::format("transformers version {} is not a version",
                                        quote_for_message(library_version)));
  }
  const auto key = std::filesystem::path("transformers-" + library_version) / "parallel" /
                   (model_type + ".json");
  CANRUN_ASSIGN_OR_RETURN(
      nlohmann::json answer,
      python.cached(key, is_answer, [&]() -> Result<nlohmann::json> {
        CANRUN_ASSIGN_OR_RETURN(nlohmann::json json,
                                python.ask("the parallel probe", kProbe, {model_type}));
        if (!is_answer(json)) {
          return corrupt("the parallel probe's answer is not the JSON object expected");
        }
        if (json.value("transformers", "") != library_version) {
          return corrupt(fmt::format("the stack reported transformers {} but imports {}",
                                     library_version, json.value("transformers", "?")));
        }
        return json;
      }));
  ParallelSupport support;
  support.known_model_type = answer["known"].get<bool>();
  support.tp_plan = answer.value("tp_plan", false);
  support.ep_plan = answer.value("ep_plan", false);
  support.library_version = library_version;
  return support;
}

}  // namespace canrun::stack
