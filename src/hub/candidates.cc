#include "hub/candidates.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/log.h"
#include "task/task.h"

namespace canrun::hub {
namespace {

bool has_tag(const std::vector<std::string>& tags, std::string_view tag) {
  return std::find(tags.begin(), tags.end(), tag) != tags.end();
}

bool is_supported_task(std::string_view task) {
  const auto& tasks = supported_tasks();
  return std::find(tasks.begin(), tasks.end(), task) != tasks.end();
}

std::string task_list() {
  std::string out;
  for (const auto& task : supported_tasks()) out += (out.empty() ? "" : ", ") + task;
  return out;
}

//! What the automatic rules read, from the model info or, lacking it, the ranking entry.
struct ModelSignals {
  std::string gated;
  std::map<std::string, std::string> auto_map;
  std::vector<std::string> architectures;
  std::optional<bool> has_safetensors;  //!< unknown without the file list
  bool custom_code_tag = false;         //!< the Hub tags remote-code repos "custom_code"
  std::optional<std::string> pipeline_tag;
  //! A pipeline's components canrun does not load (ModelFacts::foreign_components).
  std::vector<std::string> foreign_components;
  bool foreign_components_in_repo = false;
  std::optional<bool> has_tokenizer;  //!< unknown without the file list
};

std::optional<CandidateExclusion> automatic_exclusion(
    const ModelSignals& model, std::string_view task,
    const std::map<std::string, bool>& known_architectures, const std::string& library_version) {
  if (!model.gated.empty()) {
    return CandidateExclusion{
        "gated",
        fmt::format("Gated on the Hub ({} approval): downloading needs a token and accepting "
                    "the license.",
                    model.gated == "auto" ? "automatic" : "manual"),
        false};
  }
  if (!model.auto_map.empty()) {
    const auto& [auto_class, reference] = *model.auto_map.begin();
    return CandidateExclusion{
        "remote_code",
        fmt::format("config.json has auto_map ({} → {}): it needs trust_remote_code, which "
                    "canrun never sets.",
                    auto_class, reference),
        false};
  }
  for (const auto& architecture : model.architectures) {
    const auto it = known_architectures.find(architecture);
    if (it != known_architectures.end() && !it->second) {
      return CandidateExclusion{
          "remote_code",
          fmt::format("transformers {} has no class {}: the architecture needs remote code.",
                      library_version, architecture),
          false};
    }
  }
  if (!model.foreign_components.empty()) {
    return CandidateExclusion{
        model.foreign_components_in_repo ? "remote_code" : "incompatible",
        foreign_components_why(model.foreign_components, model.foreign_components_in_repo), false};
  }
  if (model.architectures.empty() && model.custom_code_tag) {
    return CandidateExclusion{"remote_code",
                              "Tagged custom_code on the Hub: the model needs remote code.", false};
  }
  if (model.has_safetensors == false) {
    return CandidateExclusion{"no_safetensors",
                              "No model.safetensors or model.safetensors.index.json: nothing "
                              "from_pretrained can load without pickles.",
                              false};
  }
  const std::string model_task = model.pipeline_tag.value_or(std::string(task));
  if (!is_supported_task(model_task)) {
    return CandidateExclusion{
        "unsupported_task",
        fmt::format("Task {} has no canrun recipe yet (tested: {}).", model_task, task_list()),
        false};
  }
  const task::TaskSpec* spec = task::find_task(task);
  if (spec && spec->text_only && model.has_tokenizer == false) {
    return CandidateExclusion{
        "unsupported_task",
        fmt::format("No tokenizer in the repo: canrun's {} recipe encodes text, and this is an "
                    "encoder of something else ({}: images or audio?).",
                    task,
                    model.architectures.empty() ? std::string("no architecture named")
                                                : model.architectures.front()),
        false};
  }
  // Its own task's recipe would test it, not this one's; unless this task takes that one's
  // models too (SPEC.md §1).
  if (model_task != task && !(spec && spec->takes_models_of == model_task)) {
    return CandidateExclusion{
        "unsupported_task",
        fmt::format("The Hub lists it for {}, not {}: canrun tests it as {} (--task {}).",
                    model_task, task, model_task, model_task),
        false};
  }
  return std::nullopt;
}

}  // namespace

const std::vector<std::string>& supported_tasks() {
  static const std::vector<std::string> tasks = task::task_names();
  return tasks;
}

std::vector<Candidate> list_candidates(const CandidateInputs& inputs) {
  std::vector<Candidate> candidates;
  std::map<std::string, std::size_t> index_of;
  for (const auto& model : inputs.selected->for_task(inputs.task)) {
    index_of[model.id.str()] = candidates.size();
    candidates.push_back(Candidate{model.id.str(), true, model.note, {}, {}, "", ""});
  }
  for (std::size_t idx = 0; idx < inputs.ranked.size(); ++idx) {
    const RankedModel& model = inputs.ranked[idx];
    const auto found = index_of.find(model.id);
    if (found != index_of.end()) {
      if (!candidates[found->second].rank) candidates[found->second].rank = idx + 1;
      continue;
    }
    index_of[model.id] = candidates.size();
    candidates.push_back(Candidate{model.id, false, "", idx + 1, {}, "", ""});
  }
  return candidates;
}

Result<std::vector<Candidate>> select_candidates(const CandidateInputs& inputs,
                                                 const ModelInfoLookup& lookup,
                                                 stack::ArchitectureSupport& architectures) {
  std::vector<Candidate> candidates = list_candidates(inputs);
  std::map<std::string, const RankedModel*> ranked_by_id;
  for (const RankedModel& model : inputs.ranked) ranked_by_id.emplace(model.id, &model);

  // Curated rules first; the rest need the model's signals.
  std::vector<std::pair<std::size_t, ModelSignals>> to_check;
  std::set<std::string> all_architectures;
  for (std::size_t idx = 0; idx < candidates.size(); ++idx) {
    Candidate& candidate = candidates[idx];
    CANRUN_ASSIGN_OR_RETURN(const ModelId id, ModelId::parse(candidate.id));
    if (const auto rule = inputs.exclusions->match(id)) {
      candidate.exclusion = CandidateExclusion{rule->reason, rule->why, true};
      continue;
    }
    ModelSignals signals;
    auto facts = lookup(id);
    if (facts.ok()) {
      candidate.facts_from = "hub";
      signals = {facts->gated,
                 facts->auto_map,
                 facts->architectures,
                 facts->has_safetensors(),
                 has_tag(facts->tags, "custom_code"),
                 facts->pipeline_tag,
                 facts->foreign_components,
                 facts->foreign_components_in_repo,
                 facts->files.empty() ? std::nullopt : std::optional(facts->has_tokenizer())};
    } else if (const auto ranked = ranked_by_id.find(candidate.id);
               ranked != ranked_by_id.end() && (facts.error().code() == ErrorCode::kUnavailable ||
                                                facts.error().code() == ErrorCode::kTimeout)) {
      candidate.facts_from = "ranking";
      const RankedModel& entry = *ranked->second;
      signals.gated = entry.gated;
      signals.custom_code_tag = has_tag(entry.tags, "custom_code");
      signals.pipeline_tag = entry.pipeline_tag;
      if (has_tag(entry.tags, "gguf") && !has_tag(entry.tags, "safetensors")) {
        signals.has_safetensors = false;
      }
    } else if (facts.error().code() == ErrorCode::kUnavailable ||
               facts.error().code() == ErrorCode::kTimeout) {
      candidate.facts_from = "none";  // curated, unranked, and the Hub out of reach
      continue;
    } else {
      candidate.problem = facts.error().message();
      continue;
    }
    all_architectures.insert(signals.architectures.begin(), signals.architectures.end());
    to_check.emplace_back(idx, std::move(signals));
  }
  stack::ArchitectureAnswers answers;
  if (!all_architectures.empty()) {
    CANRUN_ASSIGN_OR_RETURN(answers, architectures.check(std::vector<std::string>(
                                         all_architectures.begin(), all_architectures.end())));
  }
  for (const auto& [idx, signals] : to_check) {
    candidates[idx].exclusion =
        automatic_exclusion(signals, inputs.task, answers.known, answers.library_version);
  }
  return candidates;
}

nlohmann::json candidate_to_json(const Candidate& candidate) {
  nlohmann::json out = {
      {"id", candidate.id},
      {"selected", candidate.selected},
      {"note", candidate.note.empty() ? nlohmann::json(nullptr) : nlohmann::json(candidate.note)},
      {"rank", candidate.rank ? nlohmann::json(*candidate.rank) : nullptr},
      {"excluded", candidate.exclusion.has_value()},
      {"exclusion", nullptr},
      {"facts_from", candidate.facts_from.empty() ? nlohmann::json(nullptr)
                                                  : nlohmann::json(candidate.facts_from)},
      {"problem",
       candidate.problem.empty() ? nlohmann::json(nullptr) : nlohmann::json(candidate.problem)}};
  if (candidate.exclusion) {
    out["exclusion"] = {{"reason", candidate.exclusion->reason},
                        {"why", candidate.exclusion->why},
                        {"rule", candidate.exclusion->curated ? "curated" : "automatic"}};
  }
  return out;
}

}  // namespace canrun::hub
