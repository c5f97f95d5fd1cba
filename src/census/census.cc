#include "census/census.h"

#include <fmt/format.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>
#include <tuple>

#include "campaign/campaign_dir.h"
#include "campaign/work.h"
#include "census/census_files.h"
#include "core/atomic_file.h"
#include "core/json_fields.h"
#include "core/log.h"
#include "core/text.h"
#include "dataset/dataset.h"
#include "process/box.h"
#include "process/environment.h"
#include "stack/python.h"
#include "stack/stack.h"

namespace canrun::census {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

Result<TypeEntry> parse_entry(const json& object, std::size_t index) {
  const std::string where = fmt::format("the census manifest's entry {}", index);
  if (!object.is_object()) return corrupt(where + ": not an object");
  TypeEntry entry;
  CANRUN_ASSIGN_OR_RETURN(entry.model_type, required_json_string(object, where, "model_type"));
  CANRUN_ASSIGN_OR_RETURN(entry.task, required_json_string(object, where, "task"));
  CANRUN_ASSIGN_OR_RETURN(entry.status, required_json_string(object, where, "status"));
  if (entry.status != "built" && entry.status != "other_task" && entry.status != "failed") {
    return corrupt(fmt::format("{}: status {} is none of built, other_task, failed", where,
                               quote_for_message(entry.status)));
  }
  CANRUN_RETURN_IF_ERROR(read_json_string(object, where, "kind", entry.kind));
  CANRUN_RETURN_IF_ERROR(read_json_string(object, where, "other_task", entry.other_task));
  CANRUN_RETURN_IF_ERROR(read_json_string(object, where, "model_id", entry.model_id));
  CANRUN_RETURN_IF_ERROR(read_json_string(object, where, "revision", entry.revision));
  CANRUN_RETURN_IF_ERROR(read_json_string(object, where, "step", entry.step));
  CANRUN_RETURN_IF_ERROR(read_json_string(object, where, "error", entry.error));
  CANRUN_RETURN_IF_ERROR(read_json_number(object, where, "build_seconds", entry.build_seconds));
  if (const auto claims = object.find("claims"); claims != object.end() && claims->is_object()) {
    const std::string in_claims = where + " (claims)";
    CANRUN_RETURN_IF_ERROR(read_json_bool(*claims, in_claims, "tp_plan", entry.claims.tp_plan));
    CANRUN_RETURN_IF_ERROR(read_json_bool(*claims, in_claims, "ep_plan", entry.claims.ep_plan));
    if (const auto fullgraph = claims->find("can_compile_fullgraph");
        fullgraph != claims->end() && fullgraph->is_boolean()) {
      entry.claims.fullgraph = fullgraph->get<bool>();
    }
  }
  if (entry.model_id.empty()) entry.model_id = census_model_id(entry.model_type, entry.task);
  if (entry.status == "built" && entry.revision.empty()) {
    return corrupt(fmt::format("{}: {} was built but has no revision", where, entry.model_type));
  }
  return entry;
}

//! A poller that logs the generator's progress from its manifest, every `every`, until destroyed.
class BuildProgress {
 public:
  BuildProgress(fs::path manifest, std::chrono::seconds every)
      : manifest_(std::move(manifest)),
        every_(every),
        thread_([this](std::stop_token stop) { watch(stop); }) {}

 private:
  void watch(std::stop_token stop) {
    std::mutex mutex;
    std::condition_variable_any wake;
    std::unique_lock lock(mutex);
    std::size_t said = 0;
    // Wakes when stopped (the build ended), else after `every_`.
    while (!wake.wait_for(lock, stop, every_, [] { return false; }) && !stop.stop_requested()) {
      auto text = read_file(manifest_);
      if (!text.ok()) continue;
      const json manifest = json::parse(*text, nullptr, false);
      if (!manifest.is_object() || !manifest.contains("entries")) continue;
      const std::size_t entries = manifest["entries"].size();
      if (entries == said) continue;
      said = entries;
      log::info("census: building the checkpoints: {} of {} types", entries,
                manifest.value("planned", entries));
    }
  }

  fs::path manifest_;
  std::chrono::seconds every_;
  std::jthread thread_;  // last: stopped and joined first
};

std::string joined(const std::vector<std::string>& names) {
  return fmt::format("{}", fmt::join(names, ","));
}

//! Runs the generator with the stack's Python into `hf_home`; its manifest.
Result<Manifest> build_checkpoints(const CensusOptions& options, const std::string& python,
                                   const fs::path& cache_dir, const fs::path& hf_home,
                                   process::ProcessLauncher& launcher) {
  const fs::path work = cache_dir / "census" / "generator";
  std::error_code error;
  fs::create_directories(work, error);
  fs::create_directories(hf_home, error);
  if (error)
    return io_error(fmt::format("cannot create {}: {}", hf_home.string(), error.message()));
  CANRUN_RETURN_IF_ERROR(
      write_file_atomically(work / "build_checkpoints.py", census_files().at("build_checkpoints")));
  CANRUN_RETURN_IF_ERROR(
      write_file_atomically(work / "overrides.json", census_files().at("overrides")));
  const fs::path manifest = hf_home / "manifest.json";
  fs::remove(manifest, error);  // the progress is read from the one this build writes
  process::ProcessSpec spec;
  spec.argv = {python,
               "build_checkpoints.py",
               "--hf-home",
               hf_home.string(),
               "--tasks",
               joined(options.tasks),
               "--manifest",
               manifest.string(),
               "--overrides",
               options.overrides_file.empty() ? (work / "overrides.json").string()
                                              : fs::absolute(options.overrides_file).string()};
  if (!options.types.empty()) {
    spec.argv.push_back("--types");
    spec.argv.push_back(joined(options.types));
  }
  spec.env = process::environment_for(process::Audience::kRun);
  CANRUN_ASSIGN_OR_RETURN(const process::OwnFolders own, process::OwnFolders::make(work, spec.env));
  spec.box = process::box_if_isolated({work, spec.env.at("TMPDIR"), hf_home});
  spec.cwd = work;
  spec.timeout = std::chrono::hours(4);  // hundreds of types, seconds each
  log::info("census: building the tiny checkpoints of transformers' model types into {}",
            hf_home.string());
  auto outcome = [&] {
    BuildProgress progress(manifest, std::chrono::seconds(15));
    return launcher.run(spec);
  }();
  if (!outcome.ok()) return outcome.error().with_context("the census's checkpoint generator");
  const std::string& said = outcome->stderr_tail;
  if (outcome->exit_code == 2) {
    // The generator refused its arguments (an unknown type or task): its own words.
    std::string message = said;
    while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) {
      message.pop_back();
    }
    if (const auto line = message.rfind('\n'); line != std::string::npos) {
      message = message.substr(line + 1);
    }
    if (message.starts_with("error: ")) message = message.substr(7);
    return invalid_argument(message);
  }
  if (outcome->timed_out || outcome->exit_code != 0) {
    return internal_error(fmt::format(
        "the census's checkpoint generator failed ({}):\n{}",
        outcome->timed_out ? "past its time limit"
                           : fmt::format("exit status {}", outcome->exit_code.value_or(-1)),
        said.substr(said.size() > 4000 ? said.size() - 4000 : 0)));
  }
  CANRUN_ASSIGN_OR_RETURN(std::string text, read_file(manifest));
  const json parsed = json::parse(text, nullptr, false);
  return parse_manifest(parsed);
}

//! The sharded id's repo folder: a link to the one-core id's, so both name one snapshot.
Status link_sharded(const fs::path& hf_home, const std::string& model_type) {
  const std::string one_core = fmt::format("models--{}--{}", kOrg, model_type);
  const fs::path sharded = hf_home / "hub" / fmt::format("models--{}--{}", kShardedOrg, model_type);
  std::error_code error;
  if (fs::is_symlink(sharded, error) && fs::read_symlink(sharded, error) == one_core) {
    return ok_status();
  }
  fs::remove_all(sharded, error);
  fs::create_directory_symlink(one_core, sharded, error);
  if (error) {
    return io_error(
        fmt::format("cannot link {} to {}: {}", sharded.string(), one_core, error.message()));
  }
  return ok_status();
}

//! Whether the campaign planned in `dir` holds the models of `lines` ("MODEL TASK CORES"), no
//! more and no fewer.
bool plans_the_models(const campaign::CampaignDir& dir, const std::vector<std::string>& lines) {
  if (!dir.planned()) return false;
  const auto items = dir.read_work();
  if (!items.ok()) return false;
  std::set<std::string> planned, wanted;
  for (const campaign::WorkItem& item : *items) planned.insert(item.model_id.str());
  for (const std::string& line : lines) wanted.insert(line.substr(0, line.find(' ')));
  return planned == wanted;
}

Result<campaign::CampaignOutcome> run_pass(const CensusOptions& options, const fs::path& dir,
                                           const std::vector<std::string>& lines,
                                           bool agreement_decides,
                                           process::ProcessLauncher& launcher,
                                           campaign::CampaignObserver& observer,
                                           const std::atomic<bool>& stop) {
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) return io_error(fmt::format("cannot create {}: {}", dir.string(), error.message()));
  const fs::path models = dir / "models.txt";
  std::string text = "# the census's models: MODEL TASK CORES\n";
  for (const std::string& line : lines) text += line + "\n";
  CANRUN_RETURN_IF_ERROR(write_file_atomically(models, text));
  // A pass resumes the campaign it planned only when that plan holds its models: the sharded
  // pass's list grows as later sittings finish more one-core PASSes, and a campaign resumed
  // runs the list it planned. Planned anew, it runs what is new and keeps the verdicts that
  // stand in the dataset (same checkpoint commit).
  const bool same_models = plans_the_models(campaign::CampaignDir(dir), lines);
  campaign::CampaignOptions campaign;
  campaign.trial = options.trial;
  campaign.trial.agreement_decides = agreement_decides;
  campaign.trial.exclusions_file = options.exclusions_file;
  // Whether each architecture runs, not how fast: no eager baseline, no long generation (the
  // census's random weights say nothing of speed, and its hundreds of runs stay short).
  campaign.trial.perf = false;
  campaign.trial.long_tokens = 0;
  campaign.selection.tasks = options.tasks;
  campaign.selection.models_file = models;
  campaign.selection.exclusions_file = options.exclusions_file;
  campaign.out = options.out;
  campaign.dir = dir;
  campaign.max_cores = options.max_cores;
  campaign.resume = options.resume && same_models;
  return campaign::run_campaign(campaign, launcher, observer, stop);
}

//! Upserts the rows of the types not built, but those the dataset holds already with the same
//! verdict (a census run again, or resumed, records them once).
Status record_not_built(const dataset::DatasetDir& dataset,
                        const std::vector<dataset::VerdictRow>& rows) {
  if (rows.empty()) return ok_status();
  CANRUN_ASSIGN_OR_RETURN(dataset::StackKey key, dataset::stack_key_of(rows.front()));
  std::set<std::tuple<std::string, std::string, std::string, std::string>> held;
  if (auto stored = dataset.read_stack(key); stored.ok()) {
    for (const dataset::VerdictRow& row : *stored) {
      held.emplace(row.model_id, row.task, row.exclusion_reason.value_or(""),
                   row.error.value_or(""));
    }
  }
  std::vector<dataset::VerdictRow> fresh;
  for (const dataset::VerdictRow& row : rows) {
    if (!held.contains(
            {row.model_id, row.task, row.exclusion_reason.value_or(""), row.error.value_or("")})) {
      fresh.push_back(row);
    }
  }
  if (fresh.empty()) return ok_status();
  return dataset.upsert(std::move(fresh));
}

}  // namespace

std::string census_model_id(const std::string& model_type, const std::string& task) {
  return task == "text-generation" ? fmt::format("{}/{}", kOrg, model_type)
                                   : fmt::format("{}/{}-{}", kOrg, model_type, task);
}

Result<Manifest> parse_manifest(const json& json) {
  if (!json.is_object()) return corrupt("the census manifest is not a JSON object");
  Manifest manifest;
  CANRUN_ASSIGN_OR_RETURN(manifest.transformers,
                          required_json_string(json, "the census manifest", "transformers"));
  std::optional<std::int64_t> planned;
  CANRUN_RETURN_IF_ERROR(read_json_count(json, "the census manifest", "planned", planned));
  const auto entries = json.find("entries");
  if (entries == json.end() || !entries->is_array()) {
    return corrupt("the census manifest has no list \"entries\"");
  }
  for (std::size_t index = 0; index < entries->size(); ++index) {
    CANRUN_ASSIGN_OR_RETURN(TypeEntry entry, parse_entry((*entries)[index], index));
    manifest.entries.push_back(std::move(entry));
  }
  manifest.planned = planned ? static_cast<std::size_t>(*planned) : manifest.entries.size();
  return manifest;
}

dataset::VerdictRow not_built_row(const TypeEntry& entry, const backend::BackendProfile& profile,
                                  const stack::Stack& stack) {
  trial::ExcludedModel model;
  model.model_id = entry.model_id;
  model.task = entry.task;
  if (entry.status == "other_task") {
    model.reason = "other_task";
    model.why = fmt::format(
        "{} ({}) is in transformers' {} mapping but belongs to {}; the census does not build it "
        "as a {} model",
        entry.model_type, entry.kind.empty() ? "another kind" : entry.kind, entry.task,
        entry.other_task.empty() ? "another task" : entry.other_task, entry.task);
  } else {
    model.reason = "build_failed";
    model.why = fmt::format("the census could not build a tiny {} checkpoint: failed at {}: {}",
                            entry.model_type, entry.step.empty() ? "an unknown step" : entry.step,
                            entry.error);
  }
  dataset::VerdictRow row = trial::excluded_row(model, profile, stack);
  row.model_type = entry.model_type;
  row.claims_fullgraph = entry.claims.fullgraph;
  row.claims_tp_plan = entry.claims.tp_plan;
  row.claims_ep_plan = entry.claims.ep_plan;
  return row;
}

Result<CensusOutcome> run_census(const CensusOptions& options, process::ProcessLauncher& launcher,
                                 campaign::CampaignObserver& observer,
                                 const std::atomic<bool>& stop) {
  if (options.tasks.empty()) return invalid_argument("--tasks names no task");
  for (const std::string& task : options.tasks) {
    if (std::find(std::begin(kTasks), std::end(kTasks), task) == std::end(kTasks)) {
      return invalid_argument(fmt::format("the census has no task {}; its tasks are {}",
                                          quote_for_message(task), fmt::join(kTasks, ", ")));
    }
  }
  if (options.shard_cores < 2) return invalid_argument("the sharded runs need at least 2 cores");
  CANRUN_ASSIGN_OR_RETURN(backend::BackendProfile profile, trial::trial_profile(options.trial));
  const fs::path cache_dir = trial::absolute_cache_dir(options.trial);
  const stack::StackPython python(options.trial.python, cache_dir / "stack", launcher);
  CensusOutcome outcome;
  CANRUN_ASSIGN_OR_RETURN(outcome.library_version, stack::probe_library_version(python));
  if (!stack::is_safe_name(outcome.library_version)) {
    return corrupt(fmt::format("transformers version {} is not a version",
                               quote_for_message(outcome.library_version)));
  }
  const std::string stack_name = "transformers-" + outcome.library_version;
  const fs::path hf_home = cache_dir / "census" / "hf" / stack_name;

  const auto build_started = std::chrono::steady_clock::now();
  CANRUN_ASSIGN_OR_RETURN(
      outcome.manifest, build_checkpoints(options, python.python(), cache_dir, hf_home, launcher));
  outcome.build_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - build_started).count();
  if (outcome.manifest.transformers != outcome.library_version) {
    return corrupt(fmt::format("the stack reported transformers {} but its generator imported {}",
                               outcome.library_version, outcome.manifest.transformers));
  }

  // The census dataset says what it is (its card reads census.json), and records at once the
  // types that were not built.
  const dataset::DatasetDir dataset(options.out);
  std::error_code error;
  fs::create_directories(options.out, error);
  if (error) {
    return io_error(fmt::format("cannot create {}: {}", options.out.string(), error.message()));
  }
  CANRUN_RETURN_IF_ERROR(write_file_atomically(
      fs::path(options.out) / dataset::kCensusMarker,
      json{{"census", 1}, {"ids", {std::string(kOrg), std::string(kShardedOrg)}}}.dump(1) + "\n"));
  CANRUN_ASSIGN_OR_RETURN(stack::Stack stack, stack::probe_stack(python, profile));
  std::vector<std::string> one_core_lines;
  for (const TypeEntry& entry : outcome.manifest.entries) {
    if (entry.status == "built") {
      one_core_lines.push_back(fmt::format("{} {} 1", entry.model_id, entry.task));
    } else {
      outcome.not_built.push_back(not_built_row(entry, profile, stack));
    }
  }
  CANRUN_RETURN_IF_ERROR(record_not_built(dataset, outcome.not_built));

  // The campaigns resolve the census's checkpoints from its own cache, and never the Hub.
  ::setenv("HF_HOME", hf_home.c_str(), 1);
  ::setenv("HF_HUB_OFFLINE", "1", 1);
  ::unsetenv("HF_HUB_CACHE");
  // A folder per set of tasks: a census of other tasks into the same dataset (a later sitting of
  // `make census`) is a campaign of its own, never a resume of another's planned work.
  std::vector<std::string> task_set = options.tasks;
  std::sort(task_set.begin(), task_set.end());
  task_set.erase(std::unique(task_set.begin(), task_set.end()), task_set.end());
  const fs::path campaigns = fs::path(options.out) / ".census" / profile.name / stack_name /
                             fmt::format("{}", fmt::join(task_set, "+"));
  if (!one_core_lines.empty()) {
    CANRUN_ASSIGN_OR_RETURN(
        outcome.one_core,
        run_pass(options, campaigns / "one-core", one_core_lines, false, launcher, observer, stop));
  }
  if (outcome.one_core.interrupted || stop) return outcome;

  // Sharded: text generation that PASSed on one core, under its second id.
  std::vector<std::string> sharded_lines;
  for (const auto& [index, row] : outcome.one_core.results) {
    const campaign::WorkItem& item = outcome.one_core.items[index];
    if (item.task != "text-generation" || row.result != VerdictResult::kPass) continue;
    const std::string model_type(item.model_id.name());
    CANRUN_RETURN_IF_ERROR(link_sharded(hf_home, model_type));
    sharded_lines.push_back(
        fmt::format("{}/{} text-generation {}", kShardedOrg, model_type, options.shard_cores));
  }
  std::sort(sharded_lines.begin(), sharded_lines.end());
  if (!sharded_lines.empty()) {
    CANRUN_ASSIGN_OR_RETURN(outcome.sharded, run_pass(options, campaigns / "sharded", sharded_lines,
                                                      true, launcher, observer, stop));
  }
  return outcome;
}

}  // namespace canrun::census
