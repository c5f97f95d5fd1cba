// canrun campaign: the main job (SPEC.md §10) on this machine — select the models of some
// tasks, exclude with reasons, plan, pack the trials onto the cores, run, verify and record
// each verdict at once; resumable (src/campaign). Fleet campaigns and `campaign status` are in
// fleet_commands.cc.
#include <fmt/format.h>

#include <memory>
#include <string>
#include <vector>

#include "campaign/executors.h"
#include "campaign/local_campaign.h"
#include "cli/campaign_options.h"
#include "cli/campaign_progress.h"
#include "cli/campaign_report.h"
#include "cli/commands.h"
#include "cli/exit_code.h"
#include "cli/fleet_commands.h"
#include "cli/stop_signals.h"
#include "cli/trial_options.h"
#include "core/cache_dir.h"
#include "core/text.h"

namespace canrun::cli {
namespace {

namespace fs = std::filesystem;

int run_campaign_command(const CampaignCommandOptions& options) {
  if (!options.collect.empty()) return run_collect(options);
  if (options.out.empty()) return report(invalid_argument("--out is required"));
  CANRUN_ASSIGN_OR_RETURN_EXIT(trial::TrialRequest request, trial_request(options.trial));
  campaign::CampaignOptions campaign;
  campaign.trial = std::move(request);
  campaign.selection.tasks = split_list(options.tasks);
  // The shipped catalog by default, wherever canrun is started; a path given is the user's.
  CANRUN_ASSIGN_OR_RETURN_EXIT(
      campaign.selection.selected_file,
      given_or_shipped("--selected", options.selected, "catalog", "selected.toml"));
  CANRUN_ASSIGN_OR_RETURN_EXIT(
      campaign.selection.exclusions_file,
      given_or_shipped("--exclusions", options.exclusions, "catalog", "exclusions.toml"));
  // Its trials are screened by the campaign's exclusions, not trial_request's default.
  campaign.trial.exclusions_file = campaign.selection.exclusions_file;
  campaign.selection.rankings_dir = options.rankings.empty()
                                        ? trial::absolute_cache_dir(campaign.trial) / "rankings"
                                        : fs::path(options.rankings);
  campaign.selection.top = options.top;
  if (!options.models.empty()) {
    CANRUN_ASSIGN_OR_RETURN_EXIT(campaign.selection.models_file,
                                 given_file("--models", options.models));
  }
  campaign.out = options.out;
  campaign.dir = options.campaign_dir.empty()
                     ? fs::path(options.out) / ".campaign" / campaign.trial.backend
                     : fs::path(options.campaign_dir);
  campaign.max_cores = options.cores;
  if (options.disk_budget_gib < 0) return report(invalid_argument("--disk-budget must be >= 0"));
  campaign.disk_budget_bytes = static_cast<std::uint64_t>(options.disk_budget_gib * (1ull << 30));
  campaign.resume = options.resume;
  campaign.retry = options.retry;
  if (campaign.selection.tasks.empty()) return report(invalid_argument("--tasks names no task"));
  const campaign::Executor* executor = campaign::find_executor(options.executor);
  if (executor == nullptr)
    return report(invalid_argument("unknown --executor " + options.executor));
  if (!executor->runs_here()) return run_fleet(options, *executor, campaign);
  auto launcher = process::make_posix_launcher();
  if (options.dry_run) {
    CANRUN_ASSIGN_OR_RETURN_EXIT(campaign::CampaignPlan plan,
                                 campaign::plan_campaign(campaign, *launcher));
    return print_plan(plan.work, options.json);
  }
  ProgressDisplay progress(options.json);
  StopSignals stop;  // Ctrl-C and SIGTERM
  auto outcome = campaign::run_campaign(campaign, *launcher, progress, stop.requested());
  stop.restore();
  progress.clear();
  if (!outcome.ok()) return report(outcome.error());
  return print_outcome(*outcome, campaign.dir, options.json);
}

}  // namespace

void register_campaign_command(const CommandRegistry& registry) {
  auto options = std::make_shared<CampaignCommandOptions>();
  CLI::App* command = registry.root->add_subcommand(
      "campaign",
      "Test many models on a backend: select, exclude with reasons, plan, pack onto the cores, "
      "run, verify and record each verdict; resumable");
  options->trial.request.model = "-";  // each item names its own model
  add_stack_options(*command, options->trial);
  command->add_option("--tasks", options->tasks, "Hub pipeline tags, comma-separated")
      ->capture_default_str();
  command->add_option("--selected", options->selected,
                      "Curated list (default: the shipped catalog/selected.toml, wherever canrun "
                      "is started)");
  command->add_option("--exclusions", options->exclusions,
                      "Curated exclusions (default: the shipped catalog/exclusions.toml)");
  command->add_option("--rankings", options->rankings,
                      "Rankings snapshot folder (default: rankings/ in the cache)");
  command->add_option("--top", options->top, "Models of each ranking (downloads, trending)")
      ->capture_default_str();
  command->add_option(
      "--models", options->models,
      "Test exactly these: a file of \"MODEL [TASK [CORES]]\" lines (CORES: on exactly "
      "that many, with the parallelism the stack offers there)");
  command->add_option("--out", options->out, "The dataset to record verdicts in (required)");
  command->add_option("--campaign-dir", options->campaign_dir,
                      "The campaign's folder (default: DATASET/.campaign/BACKEND)");
  command->add_option(
      "--cores", options->cores,
      "Use at most this many cores; default: all. On the cpu backend, worker processes: "
      "the host's CPUs by default, or N (more than the CPUs share them)");
  command->add_option("--disk-budget", options->disk_budget_gib,
                      "GiB of the HF cache the campaign's downloads may hold at once (fetched "
                      "ahead of runs, evicted after; files you had are never touched); 0: no "
                      "limit");
  command->add_option("--timeout", options->trial.timeout_s, "Seconds each run may take")
      ->capture_default_str();
  command->add_flag("--resume", options->resume, "Continue the campaign in its folder");
  command->add_option("--retry", options->retry, "Run these verdicts again: failed or all")
      ->check(CLI::IsMember({"failed", "all"}));
  command->add_flag("--dry-run", options->dry_run,
                    "Print the plan (and a fleet's slices); run, write and submit nothing, "
                    "whatever the executor, --emit included");
  command->add_flag("--json", options->json, "Machine-readable output");
  command->add_option("--tokens", options->trial.request.new_tokens, "New tokens per run")
      ->capture_default_str();
  command
      ->add_option("--long-tokens", options->trial.request.long_tokens,
                   "Text generation and image-text-to-text: tokens of the long generation after "
                   "the check (0: off)")
      ->capture_default_str();
  command->add_flag_callback(
      "--no-perf", [options] { options->trial.request.perf = false; },
      "Skip the eager baseline of each run (speedup, memory ratio)");
  command
      ->add_option("--judge-model", options->trial.request.judge_model,
                   "Judge of sharded runs' output")
      ->capture_default_str();
  std::string executor_help;
  std::vector<std::string> executor_names;
  for (const campaign::Executor* executor : campaign::executors()) {
    executor_help += fmt::format("{}{}: {}", executor_help.empty() ? "" : "; ", executor->name(),
                                 executor->summary());
    executor_names.emplace_back(executor->name());
  }
  command->add_option("--executor", options->executor, executor_help)
      ->check(CLI::IsMember(executor_names))
      ->capture_default_str();
  command->add_option("--slices", options->slices, "Slices of a fleet campaign (nodes' tasks)")
      ->capture_default_str();
  command->add_option("--parallel", options->fleet.parallel,
                      "Slices running at once (Slurm %M, Job parallelism); 0: all");
  command->add_option("--emit", options->emit,
                      "Write the fleet's scripts or manifests to this folder; submit nothing");
  command->add_option("--collect", options->collect,
                      "Merge the done slices of this fleet campaign folder into --out");
  command->add_option("--compile-cache", options->compile_cache,
                      "A compile cache every node reaches (a shared folder or "
                      "hf://buckets/<ns>/<bucket>[/<path>]): each worker pulls its compiler "
                      "version's graphs before running and pushes what it compiled after, so "
                      "the fleet compiles each graph once");
  CLI::Option* canrun_option = command->add_option(
      "--canrun", options->fleet.canrun,
      "canrun as the nodes run it (default: this executable on Slurm, canrun in the image on k8s)");
  command->add_option("--image", options->fleet.image, "k8s: the image with canrun and the stack");
  command
      ->add_option("--volume-claim", options->fleet.volume_claim,
                   "k8s: the PersistentVolumeClaim mounted at /campaign; the campaign folder "
                   "and the dataset are at its top")
      ->capture_default_str();
  command->add_option("--instance-type", options->fleet.instance_type,
                      "k8s: node selector (default: the backend's, trn2.48xlarge for neuron)");
  auto status_options = std::make_shared<std::pair<std::string, bool>>();
  CLI::App* status = command->add_subcommand(
      "status",
      "Each slice's state, counts per result and the expected time left, read from "
      "the campaign folder (wherever the campaign runs)");
  status->add_option("DIR", status_options->first, "The campaign folder")->required();
  status->add_flag("--json", status_options->second, "Machine-readable output");
  status->callback([registry, status_options] {
    *registry.action = [status_options] {
      return run_status(status_options->first, status_options->second);
    };
  });
  command->callback([registry, options, command, canrun_option] {
    if (command->got_subcommand("status")) return;
    options->canrun_given = canrun_option->count() > 0;
    *registry.action = [options] { return run_campaign_command(*options); };
  });
}

}  // namespace canrun::cli
