#include "stack/parallel_support.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <vector>

#include "core/atomic_file.h"
#include "core/text.h"

namespace canrun::stack {
namespace {

// Answers for the model types asked (a JSON list), in one process (importing transformers
// costs seconds, a config class milliseconds): {"transformers": V, "answers": [{"model_type",
// "known", "tp_plan", "ep_plan", "fullgraph"} or {"model_type", "error"}, ...]} in the order
// asked.
constexpr const char* kProbe = R"(
import json, sys
import transformers
from transformers.models.auto.configuration_auto import CONFIG_MAPPING
try:  # expert parallel is asked for through DistributedConfig(enable_expert_parallel=True)
    from transformers.distributed.configuration_utils import DistributedConfig
    ep_switch = "enable_expert_parallel" in getattr(DistributedConfig, "__dataclass_fields__", {})
except ImportError:
    ep_switch = False

def fullgraph(model_type):
    """The model classes' own claim, _can_compile_fullgraph (set on the type's PreTrainedModel);
    None when no class of the type can be imported."""
    from transformers.models.auto import modeling_auto
    for mapping in ("MODEL_MAPPING_NAMES", "MODEL_FOR_CAUSAL_LM_MAPPING_NAMES"):
        name = getattr(modeling_auto, mapping, {}).get(model_type)
        if isinstance(name, (list, tuple)):
            name = name[0] if name else None
        try:
            return bool(getattr(getattr(transformers, name), "_can_compile_fullgraph", False))
        except Exception:
            continue
    return None

def answer(model_type):
    found = {"model_type": model_type, "known": False, "tp_plan": False, "ep_plan": False,
             "fullgraph": None}
    if model_type in CONFIG_MAPPING:
        config = CONFIG_MAPPING[model_type]()
        found.update(known=True, tp_plan=bool(getattr(config, "base_model_tp_plan", None)),
                     ep_plan=ep_switch and bool(getattr(config, "base_model_ep_plan", None)),
                     fullgraph=fullgraph(model_type))
    return found

answers = []
for model_type in json.loads(sys.argv[1]):
    try:
        answers.append(answer(model_type))
    except Exception as error:
        answers.append({"model_type": model_type, "error": f"{type(error).__name__}: {error}"})
print(json.dumps({"transformers": transformers.__version__, "answers": answers}))
)";

//! An answer of this probe about the parallel plans, as every version of it wrote them.
bool has_plans(const nlohmann::json& json) {
  return json.is_object() && json.value("known", nlohmann::json()).is_boolean();
}

//! An answer of this probe; one cached before it asked for "fullgraph" is asked again when
//! probing, and still read for its plans where nothing is probed (the Space's predictions).
bool is_answer(const nlohmann::json& json) {
  if (!has_plans(json)) return false;
  const auto fullgraph = json.find("fullgraph");
  return fullgraph != json.end() && (fullgraph->is_boolean() || fullgraph->is_null());
}

ParallelSupport support_of(const nlohmann::json& answer, const std::string& library_version) {
  ParallelSupport support;
  support.known_model_type = answer["known"].get<bool>();
  support.tp_plan = answer.value("tp_plan", false);
  support.ep_plan = answer.value("ep_plan", false);
  const auto fullgraph = answer.find("fullgraph");
  if (fullgraph != answer.end() && fullgraph->is_boolean())
    support.fullgraph = fullgraph->get<bool>();
  support.library_version = library_version;
  return support;
}

//! The cache's folder of one transformers version: transformers-<version>.
constexpr std::string_view kVersionPrefix = "transformers-";

std::filesystem::path cache_key(const std::string& library_version, const std::string& model_type) {
  return std::filesystem::path(std::string(kVersionPrefix) + library_version) / "parallel" /
         (model_type + ".json");
}

//! The probe's answers for `model_types` (every one a safe name), in their order, each with
//! the stack's transformers version.
Result<std::vector<nlohmann::json>> ask(const StackPython& python,
                                        const std::string& library_version,
                                        const std::vector<std::string>& model_types) {
  CANRUN_ASSIGN_OR_RETURN(nlohmann::json json, python.ask("the parallel probe", kProbe,
                                                          {nlohmann::json(model_types).dump()}));
  if (!json.is_object() || !json.contains("answers") || !json["answers"].is_array() ||
      json["answers"].size() != model_types.size()) {
    return corrupt("the parallel probe's answer is not the JSON object expected");
  }
  if (json.value("transformers", "") != library_version) {
    return corrupt(fmt::format("the stack reported transformers {} but imports {}", library_version,
                               json.value("transformers", "?")));
  }
  std::vector<nlohmann::json> answers;
  for (std::size_t index = 0; index < model_types.size(); ++index) {
    nlohmann::json answer = json["answers"][index];
    if (!answer.is_object() || answer.value("model_type", "") != model_types[index] ||
        (!answer.contains("error") && !is_answer(answer))) {
      return corrupt(fmt::format("the parallel probe's answer for {} is not the one expected",
                                 model_types[index]));
    }
    answer["transformers"] = library_version;
    answers.push_back(std::move(answer));
  }
  return answers;
}

}  // namespace

void warm_parallel_support(const StackPython& python, const std::string& library_version,
                           const std::vector<std::string>& model_types) {
  if (!is_safe_name(library_version)) return;
  std::vector<std::string> missing;
  std::set<std::string> seen;
  for (const std::string& model_type : model_types) {
    if (!is_safe_name(model_type) || !seen.insert(model_type).second) continue;
    std::error_code error;
    if (!std::filesystem::exists(python.cache_root() / cache_key(library_version, model_type),
                                 error)) {
      missing.push_back(model_type);
    }
  }
  if (missing.empty()) return;
  auto answers = ask(python, library_version, missing);
  if (!answers.ok()) return;  // each model type asked alone reports its own error
  for (const nlohmann::json& answer : *answers) {
    if (is_answer(answer)) python.store(cache_key(library_version, answer["model_type"]), answer);
  }
}

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
  const auto key = cache_key(library_version, model_type);
  CANRUN_ASSIGN_OR_RETURN(
      nlohmann::json answer, python.cached(key, is_answer, [&]() -> Result<nlohmann::json> {
        CANRUN_ASSIGN_OR_RETURN(auto answers, ask(python, library_version, {model_type}));
        const nlohmann::json& asked = answers.front();
        if (asked.contains("error")) {
          return not_found(fmt::format("the parallel probe could not make a {} config: {}",
                                       model_type, asked.value("error", "")));
        }
        return asked;
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
      if (!has_plans(answer)) continue;
      table.emplace(std::pair(library_version, file->path().stem().string()),
                    support_of(answer, library_version));
    }
  }
  return table;
}

}  // namespace canrun::stack
