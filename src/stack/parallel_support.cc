#include "stack/parallel_support.h"

#include <fmt/format.h>

#include "core/atomic_file.h"
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

ParallelSupport support_of(const nlohmann::json& answer, const std::string& library_version) {
  ParallelSupport support;
  support.known_model_type = answer["known"].get<bool>();
  support.tp_plan = answer.value("tp_plan", false);
  support.ep_plan = answer.value("ep_plan", false);
  support.library_version = library_version;
  return support;
}

//! The cache's folder of one transformers version: transformers-<version>.
constexpr std::string_view kVersionPrefix = "transformers-";

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
  const auto key = std::filesystem::path(std::string(kVersionPrefix) + library_version) /
                   "parallel" / (model_type + ".json");
  CANRUN_ASSIGN_OR_RETURN(
      nlohmann::json answer, python.cached(key, is_answer, [&]() -> Result<nlohmann::json> {
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
  return support_of(answer, library_version);
}

ParallelSupportTable read_cached_parallel_support(const std::filesystem::path& cache_root) {
  namespace fs = std::filesystem;
  ParallelSupportTable table;
  std::error_code error;
  for (fs::directory_iterator version(cache_root, error), end; !error && version != end;
       version.increment(error)) {
    const std::string name = version->path().filename().string();
    if (!name.starts_with(kVersionPrefix)) continue;
    const std::string library_version = name.substr(kVersionPrefix.size());
    std::error_code inner;
    for (fs::directory_iterator file(version->path() / "parallel", inner), done;
         !inner && file != done; file.increment(inner)) {
      if (file->path().extension() != ".json") continue;
      auto text = read_file(file->path());
      if (!text.ok()) continue;
      const auto answer = nlohmann::json::parse(*text, nullptr, false);
      if (!is_answer(answer)) continue;
      table.emplace(std::pair(library_version, file->path().stem().string()),
                    support_of(answer, library_version));
    }
  }
  return table;
}

}  // namespace canrun::stack
