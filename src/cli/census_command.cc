// canrun census: every model type of the stack's transformers, built tiny and tested on one core
// and sharded (src/census), into a census dataset of its own.
#include <fmt/format.h>

#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "census/census.h"
#include "cli/campaign_progress.h"
#include "cli/commands.h"
#include "cli/exit_code.h"
#include "cli/stop_signals.h"
#include "cli/table.h"
#include "cli/trial_options.h"
#include "core/cache_dir.h"
#include "core/json_output.h"
#include "core/text.h"

namespace canrun::cli {
namespace {

struct CensusCommandOptions {
  TrialOptions trial;
  std::string tasks = "text-generation";
  std::string types;
  std::string out;
  std::string overrides;
  std::string executor = "local";
  int cores = 0;
  bool resume = false;
  bool json = false;
};

//! What a verdict says in the census's table: its result, or EXCLUDED's reason.
std::string verdict_text(const dataset::VerdictRow& row) {
  if (row.result == VerdictResult::kExcluded) {
    return fmt::format("EXCLUDED {}", row.exclusion_reason.value_or(""));
  }
  std::string text(to_string(row.result));
  if (row.parallelism && *row.parallelism != "none") text += " " + *row.parallelism;
  return text;
}

//! "<task>/<name>": the name of the census's id (canrun-census/<name>), which the sharded id
//! shares; how a pass's verdicts are found for a type.
std::string key_of(const census::TypeEntry& entry) {
  return entry.task + "/" + entry.model_id.substr(entry.model_id.find('/') + 1);
}

//! "<task>/<name>" → verdict, of one pass.
std::map<std::string, const dataset::VerdictRow*> by_type(
    const campaign::CampaignOutcome& outcome) {
  std::map<std::string, const dataset::VerdictRow*> rows;
  for (const auto& [index, row] : outcome.results) {
    rows[outcome.items[index].task + "/" + std::string(outcome.items[index].model_id.name())] =
        &row;
  }
  return rows;
}

//! "PASS 3, FAIL_COMPILE 1": counts per verdict text, most first.
std::map<std::string, int> counts_of(
    const std::map<std::string, const dataset::VerdictRow*>& rows) {
  std::map<std::string, int> counts;
  for (const auto& [key, row] : rows) ++counts[verdict_text(*row)];
  return counts;
}

std::string counts_text(const std::map<std::string, int>& counts) {
  std::vector<std::string> parts;
  for (const auto& [verdict, count] : counts) parts.push_back(fmt::format("{} {}", verdict, count));
  return parts.empty() ? "none" : fmt::format("{}", fmt::join(parts, ", "));
}

int print_census(const census::CensusOutcome& outcome, const CensusCommandOptions& options) {
  const auto one_core = by_type(outcome.one_core);
  const auto sharded = outcome.sharded ? by_type(*outcome.sharded)
                                       : std::map<std::string, const dataset::VerdictRow*>{};
  std::map<std::string, int> built;
  for (const census::TypeEntry& entry : outcome.manifest.entries) ++built[entry.status];
  if (options.json) {
    nlohmann::json types = nlohmann::json::array();
    for (const census::TypeEntry& entry : outcome.manifest.entries) {
      const std::string key = key_of(entry);
      const auto one = one_core.find(key);
      const auto two = sharded.find(key);
      types.push_back(
          {{"model_type", entry.model_type},
           {"task", entry.task},
           {"build", entry.status},
           {"model_id", entry.model_id},
           {"one_core",
            one == one_core.end() ? nlohmann::json() : nlohmann::json(verdict_text(*one->second))},
           {"sharded",
            two == sharded.end() ? nlohmann::json() : nlohmann::json(verdict_text(*two->second))}});
    }
    std::cout << nlohmann::json{{"transformers", outcome.library_version},
                                {"build_s", outcome.build_s},
                                {"built", built},
                                {"one_core", counts_of(one_core)},
                                {"sharded", counts_of(sharded)},
                                {"interrupted",
                                 outcome.one_core.interrupted ||
                                     (outcome.sharded && outcome.sharded->interrupted)},
                                {"types", types}}
                     .dump(1)
              << "\n";
  } else {
    TextTable table({"TASK", "MODEL TYPE", "BUILD", "ONE CORE", "SHARDED"});
    for (const census::TypeEntry& entry : outcome.manifest.entries) {
      const std::string key = key_of(entry);
      const auto one = one_core.find(key);
      const auto two = sharded.find(key);
      table.add({entry.task, entry.model_type,
                 entry.status == "failed" ? "failed at " + entry.step : entry.status,
                 one == one_core.end() ? "-" : verdict_text(*one->second),
                 two == sharded.end() ? "-" : verdict_text(*two->second)});
    }
    table.print(std::cout);
    std::cout << fmt::format(
        "\ntransformers {}: {} types; built {}, of another task {}, failed to build {} ({:.0f} s)\n"
        "one core: {}\nsharded: {}\ndataset: {}\n",
        outcome.library_version, outcome.manifest.entries.size(), built["built"],
        built["other_task"], built["failed"], outcome.build_s, counts_text(counts_of(one_core)),
        counts_text(counts_of(sharded)), options.out);
  }
  const bool interrupted =
      outcome.one_core.interrupted || (outcome.sharded && outcome.sharded->interrupted);
  if (interrupted) return 130;
  const bool problems =
      !outcome.one_core.problems.empty() || (outcome.sharded && !outcome.sharded->problems.empty());
  return problems ? kExitFailed : kExitOk;
}

int run_census_command(const CensusCommandOptions& options) {
  if (options.out.empty()) return report(invalid_argument("--out is required"));
  if (options.executor != "local") {
    return report(invalid_argument(fmt::format(
        "--executor {}: the census runs on this machine only (its checkpoints are built in "
        "this machine's cache); run it with --executor local",
        options.executor)));
  }
  CANRUN_ASSIGN_OR_RETURN_EXIT(trial::TrialRequest request, trial_request(options.trial));
  census::CensusOptions census;
  census.trial = std::move(request);
  census.tasks = split_list(options.tasks);
  census.types = split_list(options.types);
  census.out = options.out;
  census.exclusions_file = census.trial.exclusions_file;
  if (!options.overrides.empty()) {
    CANRUN_ASSIGN_OR_RETURN_EXIT(census.overrides_file,
                                 given_file("--overrides", options.overrides));
  }
  census.resume = options.resume;
  census.max_cores = options.cores;
  auto launcher = process::make_posix_launcher();
  ProgressDisplay progress(options.json);
  StopSignals stop;  // Ctrl-C and SIGTERM
  auto outcome = census::run_census(census, *launcher, progress, stop.requested());
  stop.restore();
  progress.clear();
  if (!outcome.ok()) return report(outcome.error());
  return print_census(*outcome, options);
}

}  // namespace

void register_census_command(const CommandRegistry& registry) {
  auto options = std::make_shared<CensusCommandOptions>();
  CLI::App* command = registry.root->add_subcommand(
      "census",
      "Every model type the stack's transformers maps to the tasks, built as a tiny random-weight "
      "checkpoint and tested on one core, then sharded (text generation), into a census dataset");
  options->trial.request.model = "-";  // each type names its own checkpoint
  options->trial.timeout_s = 600;
  add_stack_options(*command, options->trial);
  command
      ->add_option("--tasks", options->tasks,
                   fmt::format("Comma-separated, of {}", fmt::join(census::kTasks, ", ")))
      ->capture_default_str();
  command->add_option("--types", options->types,
                      "Comma-separated model types (default: every one of the tasks' mappings); "
                      "a type the stack's transformers does not map is refused");
  command->add_option("--out", options->out, "The census dataset (required)");
  command->add_option("--overrides", options->overrides,
                      "Per-type config overrides for the checkpoints (default: the shipped "
                      "census/overrides.json)");
  command->add_option("--cores", options->cores,
                      "Use at most this many cores; default: all (see canrun campaign)");
  command->add_option("--timeout", options->trial.timeout_s, "Seconds each run may take")
      ->capture_default_str();
  command->add_flag(
      "--resume", options->resume,
      "Continue the census of these tasks in its folder (DATASET/.census/BACKEND/STACK/TASKS)");
  command
      ->add_option("--executor", options->executor, "local only: the census runs on this machine")
      ->capture_default_str();
  command->add_option("--exclusions", options->trial.exclusions,
                      "Curated exclusions (default: the shipped catalog/exclusions.toml)");
  command->add_flag("--json", options->json, "Machine-readable output");
  command->callback([registry, options] {
    *registry.action = [options] { return run_census_command(*options); };
  });
}

}  // namespace canrun::cli
