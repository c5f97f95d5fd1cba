#include "plan/parallel_probe.h"

#include <fmt/format.h>

#include <cctype>
#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "core/text.h"

namespace canrun::plan {
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

bool safe_name(std::string_view text) {
  return !text.empty() && text.size() <= 100 &&
         std::all_of(
             text.begin(), text.end(),
             [](unsigned char c) { return std::isalnum(c) || c == '_' || c == '-' || c == '.'; }) &&
         text.find("..") == std::string_view::npos;
}

Result<ParallelSupport> from_json(const nlohmann::json& json, const std::string& library_version) {
  if (!json.is_object() || !json.value("known", nlohmann::json()).is_boolean()) {
    return corrupt("the parallel probe's answer is not the JSON object expected");
  }
  ParallelSupport support;
  support.known_model_type = json["known"].get<bool>();
  support.tp_plan = json.value("tp_plan", false);
  support.ep_plan = json.value("ep_plan", false);
  support.library_version = library_version;
  return support;
}

}  // namespace

Result<ParallelSupport> probe_parallel_support(const std::string& python,
                                               const std::string& library_version,
                                               const std::string& model_type,
                                               const std::filesystem::path& cache_dir,
                                               run::ProcessLauncher& launcher) {
  if (!safe_name(model_type)) {
    return invalid_argument(
        fmt::format("model_type {} is not a model type name", quote_for_message(model_type)));
  }
  if (!safe_name(library_version)) {
    return invalid_argument(fmt::format("transformers version {} is not a version",
                                        quote_for_message(library_version)));
  }
  const auto path = cache_dir / ("transformers-" + library_version) / (model_type + ".v2.json");
  if (auto cached = read_file(path); cached.ok()) {
    auto support = from_json(nlohmann::json::parse(*cached, nullptr, false), library_version);
    if (support.ok()) return support;
  }
  run::ProcessSpec spec;
  spec.argv = {python, "-c", kProbe, model_type};
  spec.env = run::current_environment();
  spec.timeout = std::chrono::seconds(120);
  CANRUN_ASSIGN_OR_RETURN(run::ProcessOutcome outcome, launcher.run(spec));
  if (outcome.exit_code != 0) {
    return not_found(fmt::format("the parallel probe failed in {}: {}", python,
                                 outcome.stderr_tail.substr(0, 400)));
  }
  const auto json = nlohmann::json::parse(outcome.stdout_tail, nullptr, false);
  CANRUN_ASSIGN_OR_RETURN(ParallelSupport support, from_json(json, library_version));
  if (json.value("transformers", "") != library_version) {
    return corrupt(fmt::format("the stack reported transformers {} but imports {}", library_version,
                               json.value("transformers", "?")));
  }
  std::error_code error;
  std::filesystem::create_directories(path.parent_path(), error);
  if (!error) (void)write_file_atomically(path, json.dump());
  return support;
}

}  // namespace canrun::plan
