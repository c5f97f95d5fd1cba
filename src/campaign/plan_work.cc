#include "campaign/plan_work.h"

#include <fmt/format.h>

#include <charconv>
#include <set>
#include <sstream>

#include "catalog/exclusions.h"
#include "catalog/selected_list.h"
#include "core/atomic_file.h"
#include "core/log.h"
#include "core/text.h"
#include "hub/candidates.h"
#include "hub/hub_client.h"
#include "hub/rankings.h"
#include "stack/parallel_support.h"
#include "task/task.h"
#include "trial/exclusion.h"

namespace canrun::campaign {
namespace {

namespace fs = std::filesystem;

struct Candidate {
  ModelId model_id;
  std::string task;
  std::string source;
  std::optional<int> cores;  //!< listed with its cores: exactly those (plan::plan_at_degree)
};

//! "MODEL [TASK [CORES]]" lines; # starts a comment. A line without a task is for the first
//! task; CORES runs the model on exactly that many, with the parallelism the stack offers there.
Result<std::vector<Candidate>> listed_models(const fs::path& file,
                                             const std::vector<std::string>& tasks) {
  CANRUN_ASSIGN_OR_RETURN(std::string text, read_file(file));
  std::vector<Candidate> out;
  std::istringstream lines(text);
  int number = 0;
  for (std::string line; std::getline(lines, line);) {
    ++number;
    if (const auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    std::istringstream words(line);
    std::string model, task, cores, extra;
    if (!(words >> model)) continue;
    words >> task >> cores;
    const auto refuse = [&](std::string_view what) {
      return invalid_argument(fmt::format("{}:{}: {}", file.string(), number, what));
    };
    if (words >> extra) {
      return refuse(
          fmt::format("expected \"MODEL [TASK [CORES]]\", got {}", quote_for_message(line)));
    }
    auto id = ModelId::parse(model);
    if (!id.ok()) return refuse(id.error().message());
    Candidate candidate{std::move(*id), task.empty() ? tasks.front() : task, "listed", {}};
    if (!cores.empty()) {
      int count = 0;
      const auto [end, error] = std::from_chars(cores.data(), cores.data() + cores.size(), count);
      if (error != std::errc() || end != cores.data() + cores.size() || count < 1) {
        return refuse(
            fmt::format("CORES must be a whole number of cores, got {}", quote_for_message(cores)));
      }
      candidate.cores = count;
    }
    out.push_back(std::move(candidate));
  }
  return out;
}

//! The ranked models of one task: downloads then trending, each its top N.
std::vector<hub::RankedModel> ranked_models(const Selection& selection, const std::string& task) {
  std::vector<hub::RankedModel> ranked;
  if (selection.top == 0) return ranked;
  auto config = hub::HubConfig::from_environment();
  if (!config.ok()) {
    log::warning("{}; no rankings for {}", config.error().message(), task);
    return ranked;
  }
  hub::HubClient client(std::move(*config),
                        hub::make_curl_transport(hub::default_transport_options()));
  for (const auto sort : {hub::RankingSort::kDownloads, hub::RankingSort::kTrending}) {
    auto rankings = hub::current_rankings(client, selection.rankings_dir, task, sort, selection.top,
                                          std::chrono::system_clock::now());
    if (!rankings.ok()) {
      log::warning("{} by {}: {}; not in the campaign", task, hub::ranking_sort_name(sort),
                   rankings.error().message());
      continue;
    }
    for (auto& model : rankings->snapshot.models) ranked.push_back(std::move(model));
  }
  return ranked;
}

Result<std::vector<Candidate>> select_models(const Selection& selection) {
  if (!selection.models_file.empty()) return listed_models(selection.models_file, selection.tasks);
  CANRUN_ASSIGN_OR_RETURN(catalog::SelectedList selected,
                          catalog::SelectedList::load(selection.selected_file));
  std::vector<Candidate> out;
  for (const std::string& task : selection.tasks) {
    hub::CandidateInputs inputs{task, &selected, nullptr, ranked_models(selection, task)};
    for (const hub::Candidate& candidate : hub::list_candidates(inputs)) {
      const std::string source =
          candidate.selected ? "selected" : fmt::format("ranked #{}", candidate.rank.value_or(0));
      CANRUN_ASSIGN_OR_RETURN(ModelId id, ModelId::parse(candidate.id));
      out.push_back({std::move(id), task, source, std::nullopt});
    }
  }
  return out;
}

//! "<id> (<task>): why", the id once: a resolve error that names the model first reads on
//! from it ("Qwen/Qwen3-0.6B (text-generation) at main is not in the HF cache …").
std::string unresolved_line(const std::string& id, const std::string& task, const Error& error) {
  const std::string& message = error.message();
  if (message.starts_with(id + " ") || message.starts_with(id + ": ")) {
    return fmt::format("{} ({}){}", id, task, message.substr(id.size()));
  }
  return fmt::format("{} ({}): {}", id, task, message);
}

}  // namespace

Result<PlannedWork> plan_work(const Selection& selection, const trial::TrialRequest& trial,
                              const std::string& library_version, int machine_cores,
                              process::ProcessLauncher& launcher) {
  if (selection.tasks.empty()) return invalid_argument("--tasks names no task");
  CANRUN_ASSIGN_OR_RETURN(backend::BackendProfile profile, trial::trial_profile(trial));
  if (machine_cores > 0) {
    profile.topology.max_cores = std::min(profile.topology.max_cores, machine_cores);
  }
  CANRUN_ASSIGN_OR_RETURN(catalog::Exclusions exclusions,
                          catalog::Exclusions::load(selection.exclusions_file));
  CANRUN_ASSIGN_OR_RETURN(std::vector<Candidate> candidates, select_models(selection));
  const stack::StackPython python(trial.python, trial::absolute_cache_dir(trial) / "stack",
                                  launcher);
  PlannedWork work;
  std::set<std::string> seen;
  // Resolved first, planned after: the stack is asked about every model type at once.
  struct ToPlan {
    std::size_t index;
    trial::Checkpoint checkpoint;
    std::optional<trial::PlanOverride> plan_override;
  };
  std::vector<ToPlan> to_plan;
  for (const Candidate& candidate : candidates) {
    WorkItem item(candidate.model_id, candidate.task);
    item.source = candidate.source;
    if (!seen.insert(item.key()).second) continue;
    // The rule of canrun test, plan and render (trial/exclusion.h), step by step.
    const auto exclude = [&](trial::Exclusion exclusion) {
      item.exclusion_reason = std::move(exclusion.reason);
      item.why = std::move(exclusion.why);
      work.items.push_back(std::move(item));
    };
    if (auto curated = trial::curated_exclusion(exclusions, candidate.model_id)) {
      exclude(std::move(*curated));
      continue;
    }
    auto checkpoint = trial::resolve_checkpoint({candidate.model_id.str(), "main", std::nullopt});
    if (!checkpoint.ok()) {
      if (auto gated = trial::resolve_exclusion(checkpoint.error())) {
        exclude(std::move(*gated));
      } else {
        work.unresolved.push_back(
            unresolved_line(candidate.model_id.str(), candidate.task, checkpoint.error()));
      }
      continue;
    }
    item.revision = checkpoint->revision;
    if (auto excluded = trial::checkpoint_exclusion(*checkpoint, candidate.task, profile)) {
      exclude(std::move(*excluded));
      continue;
    }
    item.weights_bytes = checkpoint->facts.weights_bytes;
    std::optional<trial::PlanOverride> plan_override = trial.plan_override;
    if (candidate.cores) plan_override = trial::PlanOverride{*candidate.cores, std::nullopt};
    to_plan.push_back({work.items.size(), std::move(*checkpoint), std::move(plan_override)});
    work.items.push_back(std::move(item));
  }
  std::vector<std::string> model_types;
  for (const ToPlan& planned : to_plan) {
    if (planned.checkpoint.facts.model_type) {
      model_types.push_back(*planned.checkpoint.facts.model_type);
    }
  }
  stack::warm_parallel_support(python, library_version, model_types);
  for (const auto& [index, checkpoint, plan_override] : to_plan) {
    WorkItem& item = work.items[index];
    CANRUN_ASSIGN_OR_RETURN(
        trial::TrialPlan plan,
        trial::plan_trial(checkpoint, item.task, profile, python, library_version, plan_override));
    if (plan.exclusion) {
      item.exclusion_reason = plan.exclusion;
      item.why = plan.why;
      item.stack_plan = std::move(plan.stack_plan);  // the row says what the stack claims
    } else {
      item.cores = plan.cores;
      item.parallelism = plan.parallelism;
      item.checkpoint = trial::keep(checkpoint);
      item.stack_plan = std::move(plan.stack_plan);
    }
  }
  return work;
}

}  // namespace canrun::campaign
