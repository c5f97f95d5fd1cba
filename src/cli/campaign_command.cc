// canrun campaign: the main job (SPEC.md §10) on this machine — select the models of some
// tasks, exclude with reasons, plan, pack the trials onto the cores, run, verify and record
// each verdict at once; resumable (src/campaign).
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <iostream>
#include <map>
#include <memory>

#include "cache/cache_tree.h"
#include "cache/sync.h"
#include "campaign/campaign_dir.h"
#include "campaign/executors.h"
#include "campaign/fleet.h"
#include "campaign/local_campaign.h"
#include "cli/commands.h"
#include "cli/exit_code.h"
#include "cli/table.h"
#include "cli/trial_options.h"
#include "core/atomic_file.h"
#include "core/cache_dir.h"
#include "core/json_output.h"
#include "core/log.h"
#include "core/text.h"
#include "dataset/row_json.h"
#include "process/process.h"

namespace canrun::cli {
namespace {

namespace fs = std::filesystem;

struct CampaignCommandOptions {
  TrialOptions trial;
  std::string tasks = "text-generation";
  std::string selected = "catalog/selected.toml";
  std::string exclusions = "catalog/exclusions.toml";
  std::string rankings;
  std::size_t top = 0;
  std::string models;
  std::string out;
  std::string campaign_dir;
  int cores = 0;
  double disk_budget_gib = 0;
  bool resume = false;
  std::string retry;
  bool dry_run = false;
  bool json = false;
  // Fleet campaigns (campaign/fleet.h, campaign/executors.h).
  std::string executor = "local";
  std::size_t slices = 2;
  campaign::ExecutorOptions fleet;
  std::string emit;
  std::string collect;
  std::string compile_cache;
  bool canrun_given = false;  //!< --canrun was given
};

struct WorkerOptions {
  std::string campaign_dir;
  int index = -1;
  std::string python;
  std::string cache;
  bool json = false;
};

std::atomic<bool> stop_requested{false};

extern "C" void on_interrupt(int) {
  stop_requested = true;
  ::signal(SIGINT, SIG_DFL);  // a second Ctrl-C ends canrun at once
}

std::vector<std::string> split_tasks(const std::string& text) {
  std::vector<std::string> tasks;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    if (comma > start) tasks.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return tasks;
}

std::string describe_item(const campaign::WorkItem& item) {
  if (item.excluded()) return fmt::format("excluded: {}", *item.exclusion_reason);
  return fmt::format("{} core{} ({})", item.cores, item.cores == 1 ? "" : "s", item.parallelism);
}

//! Progress: one status line redrawn on a terminal, plain log lines otherwise.
class ProgressDisplay final : public campaign::CampaignObserver {
 public:
  explicit ProgressDisplay(bool quiet)
      : terminal_(!quiet && ::isatty(STDERR_FILENO) == 1), quiet_(quiet) {}

  void planned(const std::vector<campaign::WorkItem>& items, std::size_t to_run) override {
    total_ = to_run;
    started_at_ = Clock::now();
    if (!quiet_) log::info("campaign: {} items planned, {} to run now", items.size(), to_run);
  }
  void started(const campaign::WorkItem& item, const std::string& cores) override {
    running_[item.key()] = {cores, Clock::now()};
    if (!terminal_ && !quiet_)
      log::info("start   {} ({}) on cores {}", item.model_id, item.task, cores);
    redraw();
  }
  void verifying(const campaign::WorkItem& item) override {
    running_[item.key()] = {"host", Clock::now()};
    if (!terminal_ && !quiet_)
      log::info("verify  {} ({}) on the host: CPU reference, judge", item.model_id, item.task);
    redraw();
  }
  void finished(const campaign::WorkItem& item, const dataset::VerdictRow& row) override {
    running_.erase(item.key());
    ++done_;
    ++counts_[std::string(to_string(row.result))];
    if (!terminal_ && !quiet_) {
      log::info("done    {} ({}): {}{}", item.model_id, item.task, to_string(row.result),
                row.runtime_s ? fmt::format(" in {:.1f} s", *row.runtime_s) : "");
    }
    redraw();
  }
  void failed(const campaign::WorkItem& item, const Error& error) override {
    running_.erase(item.key());
    ++done_;
    ++counts_["error"];
    clear();
    log::warning("{} ({}) could not run: {}", item.model_id, item.task, error.message());
    redraw();
  }
  void tick() override { redraw(); }
  void clear() {
    if (terminal_ && drawn_) std::cerr << "\r\033[K" << std::flush;
    drawn_ = false;
  }

 private:
  using Clock = std::chrono::steady_clock;
  struct Running {
    std::string cores;
    Clock::time_point since;
  };

  void redraw() {
    if (!terminal_) return;
    const auto now = Clock::now();
    const double elapsed = std::chrono::duration<double>(now - started_at_).count();
    std::string line = fmt::format("[{}/{}]", done_, total_);
    for (const auto& [result, count] : counts_) line += fmt::format(" {} {}", result, count);
    for (const auto& [key, run] : running_) {
      line += fmt::format(" | {} @{} {:.0f}s", key, run.cores,
                          std::chrono::duration<double>(now - run.since).count());
    }
    if (done_ > 0 && done_ < total_) {
      line += fmt::format(" | ETA {:.0f}s", elapsed / static_cast<double>(done_) *
                                                static_cast<double>(total_ - done_));
    }
    std::cerr << "\r\033[K" << line.substr(0, 200) << std::flush;
    drawn_ = true;
  }

  bool terminal_;
  bool quiet_;
  bool drawn_ = false;
  std::size_t total_ = 0;
  std::size_t done_ = 0;
  Clock::time_point started_at_ = Clock::now();
  std::map<std::string, std::size_t> counts_;
  std::map<std::string, Running> running_;
};

nlohmann::json item_json(const campaign::WorkItem& item, const dataset::VerdictRow* row) {
  nlohmann::json out = campaign::work_item_to_json(item);
  out["result"] = row ? nlohmann::json(to_string(row->result)) : nlohmann::json();
  out["runtime_s"] = row && row->runtime_s ? nlohmann::json(*row->runtime_s) : nlohmann::json();
  return out;
}

int print_plan(const campaign::PlannedWork& work, bool json) {
  if (json) {
    nlohmann::json out = {{"items", nlohmann::json::array()}, {"unresolved", work.unresolved}};
    for (const auto& item : work.items) out["items"].push_back(item_json(item, nullptr));
    print_json(std::cout, out);
    return kExitOk;
  }
  TextTable table({"#", "MODEL", "TASK", "SOURCE", "PLAN", "WEIGHTS", "WHY"});
  std::size_t number = 0;
  for (const auto& item : work.items) {
    table.add(
        {std::to_string(++number), item.model_id, item.task, item.source, describe_item(item),
         item.weights_bytes ? format_bytes(static_cast<std::int64_t>(item.weights_bytes)) : "-",
         item.excluded() ? item.why : ""});
  }
  table.print(std::cout);
  for (const auto& problem : work.unresolved) std::cout << "unresolved: " << problem << "\n";
  return kExitOk;
}

//! What a campaign or a worker did: the items with their verdicts (JSON or a table), then
//! the exit code: 130 interrupted, 1 when some trial could not run, else 0.
int print_outcome(const campaign::CampaignOutcome& outcome, const fs::path& campaign_dir,
                  bool json);

int run_collect(const CampaignCommandOptions& options);
int run_fleet(const CampaignCommandOptions& options, const campaign::CampaignOptions& campaign);

int run_campaign_command(const CampaignCommandOptions& options) {
  if (!options.collect.empty()) return run_collect(options);
  if (options.out.empty()) return report(invalid_argument("--out is required"));
  CANRUN_ASSIGN_OR_RETURN_EXIT(trial::TrialRequest request, trial_request(options.trial));
  campaign::CampaignOptions campaign;
  campaign.trial = std::move(request);
  campaign.selection.tasks = split_tasks(options.tasks);
  campaign.selection.selected_file = options.selected;
  campaign.selection.exclusions_file = options.exclusions;
  campaign.selection.rankings_dir = options.rankings.empty()
                                        ? trial::absolute_cache_dir(campaign.trial) / "rankings"
                                        : fs::path(options.rankings);
  campaign.selection.top = options.top;
  campaign.selection.models_file = options.models;
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
  if (options.executor != "local") return run_fleet(options, campaign);
  auto launcher = process::make_posix_launcher();
  if (options.dry_run) {
    CANRUN_ASSIGN_OR_RETURN_EXIT(campaign::CampaignPlan plan,
                                 campaign::plan_campaign(campaign, *launcher));
    return print_plan(plan.work, options.json);
  }
  ProgressDisplay progress(options.json);
  stop_requested = false;
  ::signal(SIGINT, on_interrupt);
  auto outcome = campaign::run_campaign(campaign, *launcher, progress, stop_requested);
  ::signal(SIGINT, SIG_DFL);
  progress.clear();
  if (!outcome.ok()) return report(outcome.error());
  return print_outcome(*outcome, campaign.dir, options.json);
}

int print_outcome(const campaign::CampaignOutcome& outcome_value, const fs::path& campaign_dir,
                  bool json) {
  const campaign::CampaignOutcome* outcome = &outcome_value;
  std::map<std::string, std::size_t> counts;
  for (const auto& [index, row] : outcome->results) ++counts[std::string(to_string(row.result))];
  if (json) {
    nlohmann::json out = {{"items", nlohmann::json::array()},
                          {"counts", counts},
                          {"unresolved", outcome->unresolved},
                          {"problems", outcome->problems},
                          {"interrupted", outcome->interrupted},
                          {"wall_s", outcome->wall_s},
                          {"peak_fetched_bytes", outcome->peak_fetched_bytes},
                          {"campaign_dir", fs::absolute(campaign_dir).string()}};
    for (const std::size_t index : outcome->indices) {
      const auto found = outcome->results.find(index);
      out["items"].push_back(item_json(outcome->items[index],
                                       found == outcome->results.end() ? nullptr : &found->second));
    }
    print_json(std::cout, out);
  } else {
    TextTable table({"MODEL", "TASK", "RESULT", "CORES", "TIME", "WHY"});
    for (const std::size_t index : outcome->indices) {
      const auto& item = outcome->items[index];
      const auto found = outcome->results.find(index);
      const dataset::VerdictRow* row = found == outcome->results.end() ? nullptr : &found->second;
      table.add({item.model_id, item.task, row ? std::string(to_string(row->result)) : "not run",
                 row && row->cores ? std::to_string(*row->cores) : "-",
                 row && row->runtime_s ? fmt::format("{:.1f} s", *row->runtime_s) : "-",
                 row && row->exclusion_reason ? *row->exclusion_reason : ""});
    }
    table.print(std::cout);
    std::string summary;
    for (const auto& [result, count] : counts) summary += fmt::format(" {} {}", result, count);
    std::cout << fmt::format("{} of {} items have a verdict:{} ({:.0f} s){}\n",
                             outcome->results.size(), outcome->indices.size(), summary,
                             outcome->wall_s, outcome->interrupted ? "; interrupted" : "");
    for (const auto& problem : outcome->unresolved) std::cout << "unresolved: " << problem << "\n";
    for (const auto& problem : outcome->problems) std::cout << "problem: " << problem << "\n";
  }
  if (outcome->interrupted) return 130;
  return outcome->problems.empty() ? kExitOk : kExitFailed;
}

std::string describe_counts(const std::map<std::string, std::size_t>& counts) {
  std::string out;
  for (const auto& [result, count] : counts)
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ", result, count);
  return out.empty() ? "-" : out;
}

nlohmann::json slices_json(const std::vector<campaign::SliceState>& slices) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& slice : slices) {
    out.push_back(
        {{"slice", slice.slice},
         {"state", slice.state},
         {"items", slice.items},
         {"done", slice.done},
         {"results", slice.results},
         {"remaining_s", slice.remaining_s},
         {"compile_cache", {{"hits", slice.cache_hits}, {"misses", slice.cache_misses}}}});
  }
  return out;
}

void print_slices(const std::vector<campaign::SliceState>& slices) {
  TextTable table({"SLICE", "STATE", "DONE", "RESULTS", "LEFT (EXPECTED)"});
  for (const auto& slice : slices) {
    table.add({std::to_string(slice.slice), slice.state,
               fmt::format("{}/{}", slice.done, slice.items), describe_counts(slice.results),
               slice.done == slice.items ? "-" : fmt::format("{:.0f} s", slice.remaining_s)});
  }
  table.print(std::cout);
}

int run_collect(const CampaignCommandOptions& options) {
  if (options.out.empty()) return report(invalid_argument("--collect needs --out DATASET"));
  CANRUN_ASSIGN_OR_RETURN_EXIT(campaign::CollectOutcome outcome,
                               campaign::collect_campaign(options.collect, options.out));
  std::size_t pending = 0;
  for (const auto& slice : outcome.slices) pending += slice.state != "done";
  if (options.json) {
    print_json(std::cout, {{"slices", slices_json(outcome.slices)},
                           {"merged_rows", outcome.merged_rows},
                           {"pending_slices", pending}});
  } else {
    print_slices(outcome.slices);
    std::cout << fmt::format("{} rows of {} done slice(s) merged into {}", outcome.merged_rows,
                             outcome.slices.size() - pending, options.out);
    std::cout << (pending ? fmt::format("; {} slice(s) not done, left out\n", pending) : "\n");
  }
  return pending ? kExitFailed : kExitOk;
}

int run_status(const std::string& dir, bool json) {
  CANRUN_ASSIGN_OR_RETURN_EXIT(auto slices, campaign::slice_states(dir));
  // The campaign ends when its slowest unfinished slice does (each slice runs on its own node).
  double eta = 0;
  std::map<std::string, std::size_t> counts;
  std::int64_t hits = 0;
  std::int64_t misses = 0;
  for (const auto& slice : slices) {
    eta = std::max(eta, slice.remaining_s);
    for (const auto& [result, count] : slice.results) counts[result] += count;
    hits += slice.cache_hits;
    misses += slice.cache_misses;
  }
  if (json) {
    print_json(std::cout, {{"slices", slices_json(slices)},
                           {"results", counts},
                           {"eta_s", eta},
                           {"compile_cache", {{"hits", hits}, {"misses", misses}}}});
    return kExitOk;
  }
  print_slices(slices);
  std::cout << fmt::format("results: {}; expected left: {:.0f} s (the slowest slice)\n",
                           describe_counts(counts), eta);
  if (hits + misses > 0) {
    std::cout << fmt::format(
        "compile cache: {} of {} graphs found in the cache ({:.0f} %)\n", hits, hits + misses,
        100.0 * static_cast<double>(hits) / static_cast<double>(hits + misses));
  }
  return kExitOk;
}

int run_fleet(const CampaignCommandOptions& options, const campaign::CampaignOptions& campaign) {
  if (options.campaign_dir.empty()) {
    return report(invalid_argument("--executor " + options.executor +
                                   " needs --campaign-dir DIR on storage every node mounts (the "
                                   "slices and results go there)"));
  }
  auto launcher = process::make_posix_launcher();
  nlohmann::json executor = {{"kind", options.executor}};
  if (!options.compile_cache.empty()) {
    CANRUN_ASSIGN_OR_RETURN_EXIT(const cache::CacheLocation shared,
                                 cache::parse_location(options.compile_cache));
    executor["compile_cache"] =
        shared.is_bucket() ? shared.bucket_uri : fs::absolute(shared.local).string();
  }
  CANRUN_ASSIGN_OR_RETURN_EXIT(campaign::FleetPlan plan,
                               campaign::plan_fleet(campaign, options.slices, executor, *launcher));
  campaign::ExecutorOptions fleet = options.fleet;
  fleet.campaign_dir = fs::absolute(campaign.dir);
  fleet.out = fs::absolute(campaign.out);
  // Slurm nodes run this very executable (on shared storage) unless told otherwise; a pod
  // runs the canrun of its image.
  if (options.executor == "slurm" && !options.canrun_given) {
    fleet.canrun = (executable_dir() / "canrun").string();
  }
  std::map<std::string, std::string> files;
  if (options.executor == "slurm") {
    files = campaign::slurm_files(plan, fleet);
  } else {
    CANRUN_ASSIGN_OR_RETURN_EXIT(backend::BackendProfile profile,
                                 trial::trial_profile(campaign.trial));
    files = campaign::kubernetes_files(plan, profile, fleet);
  }
  const fs::path where =
      options.emit.empty() ? fleet.campaign_dir / options.executor : fs::path(options.emit);
  std::error_code error;
  fs::create_directories(where, error);
  fs::create_directories(fleet.campaign_dir / "slurm", error);  // the jobs' output files
  for (const auto& [name, text] : files) {
    if (auto status = write_file_atomically(where / name, text); !status.ok()) {
      return report(status.error());
    }
    if (name.ends_with(".sh") || name.ends_with(".sbatch")) {
      fs::permissions(where / name, fs::perms::owner_exec | fs::perms::group_exec,
                      fs::perm_options::add, error);
    }
  }
  std::cout << fmt::format("planned {} items in {} slice(s) in {}; {} written to {}\n",
                           plan.work.items.size(), plan.slices.size(), fleet.campaign_dir.string(),
                           options.executor, where.string());
  if (options.executor != "slurm" || !options.emit.empty()) return kExitOk;
  // Submit: the array, then the collect job once every task ended.
  process::ProcessSpec submit;
  submit.argv = {"sh", (where / "submit.sh").string()};
  submit.env = process::current_environment();  // sbatch passes it on to the jobs
  submit.timeout = std::chrono::seconds(120);
  auto submitted = launcher->run(submit);
  if (!submitted.ok()) return report(submitted.error());
  if (submitted->exit_code != 0) {
    return report(Error(ErrorCode::kFailedCheck,
                        fmt::format("submitting with sbatch failed (exit {}): {}",
                                    submitted->exit_code.value_or(-1), submitted->stderr_tail)));
  }
  std::cout << "submitted: " << submitted->stdout_tail;
  return kExitOk;
}

//! A fleet campaign's shared compile cache for its compiler version, and this node's copy.
struct SharedCompileCache {
  cache::CacheLocation remote;
  cache::CacheLocation local;
};

Result<std::optional<SharedCompileCache>> shared_compile_cache(
    const campaign::CampaignOptions& campaign) {
  CANRUN_ASSIGN_OR_RETURN(nlohmann::json settings,
                          campaign::CampaignDir(campaign.dir).read_settings());
  const auto executor = settings.value("executor", nlohmann::json::object());
  if (!executor.is_object() || !executor.contains("compile_cache")) {
    return std::optional<SharedCompileCache>();
  }
  CANRUN_ASSIGN_OR_RETURN(backend::BackendProfile profile, trial::trial_profile(campaign.trial));
  const std::string version = settings.value("compiler_version", "");
  const std::string name = cache::compiler_cache_name(profile.compiler, version);
  CANRUN_ASSIGN_OR_RETURN(
      cache::CacheLocation remote,
      cache::parse_location(executor["compile_cache"].get<std::string>() + "/" + name));
  CANRUN_ASSIGN_OR_RETURN(
      cache::CacheLocation local,
      cache::parse_location(cache::compiler_cache_dir(trial::absolute_cache_dir(campaign.trial),
                                                      profile.name, profile.compiler, version)
                                .string()));
  return std::optional(SharedCompileCache{std::move(remote), std::move(local)});
}

//! Brings the complete entries `from` lacks in `to` (never deleting); a source that does not
//! exist yet (no node compiled anything) is nothing to bring.
Status sync_compile_cache(const cache::CacheLocation& from, const cache::CacheLocation& to,
                          process::ProcessLauncher& launcher) {
  if (!from.is_bucket() && !fs::exists(from.local)) return ok_status();
  if (!to.is_bucket()) fs::create_directories(to.local);
  CANRUN_ASSIGN_OR_RETURN(cache::SyncPlan plan,
                          cache::sync_cache({from, to, false, false}, launcher));
  log::info("compile cache: {} file(s), {} copied from {} to {}",
            plan.count(cache::SyncAction::kCopy),
            format_bytes(plan.bytes(cache::SyncAction::kCopy)), from.text, to.text);
  return ok_status();
}

int run_worker_command(const WorkerOptions& options) {
  int index = options.index;
  if (index < 0) {
    for (const char* variable : {"SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX"}) {
      if (const char* value = std::getenv(variable); value != nullptr && *value != '\0') {
        index = std::atoi(value);
        break;
      }
    }
  }
  if (index < 0) {
    return report(invalid_argument(
        "--index is required (or SLURM_ARRAY_TASK_ID / JOB_COMPLETION_INDEX in the environment)"));
  }
  CANRUN_ASSIGN_OR_RETURN_EXIT(
      campaign::CampaignOptions campaign,
      campaign::worker_options(options.campaign_dir, options.python, options.cache));
  auto launcher = process::make_posix_launcher();
  ProgressDisplay progress(options.json);
  stop_requested = false;
  ::signal(SIGINT, on_interrupt);
  ::signal(SIGTERM, on_interrupt);  // Slurm and Kubernetes stop a task with SIGTERM
  CANRUN_ASSIGN_OR_RETURN_EXIT(const auto shared, shared_compile_cache(campaign));
  if (shared) {  // the graphs any node compiled before, for this compiler version
    if (auto pulled = sync_compile_cache(shared->remote, shared->local, *launcher); !pulled.ok()) {
      return report(pulled.error());
    }
  }
  auto outcome = campaign::run_worker(campaign, index, *launcher, progress, stop_requested);
  ::signal(SIGINT, SIG_DFL);
  ::signal(SIGTERM, SIG_DFL);
  progress.clear();
  if (shared) {  // what this node compiled, for the others (also after a failure)
    if (auto pushed = sync_compile_cache(shared->local, shared->remote, *launcher); !pushed.ok()) {
      return report(pushed.error());
    }
  }
  if (!outcome.ok()) return report(outcome.error());
  return print_outcome(*outcome, campaign.dir, options.json);
}

}  // namespace

void register_worker_command(const CommandRegistry& registry) {
  auto options = std::make_shared<WorkerOptions>();
  CLI::App* command = registry.root->add_subcommand(
      "worker",
      "Run one slice of a fleet campaign on this node (what each Slurm array task or Kubernetes "
      "index runs); idempotent: a requeued worker continues its slice");
  command->add_option("--campaign-dir", options->campaign_dir, "The fleet campaign's folder")
      ->required();
  command->add_option("--index", options->index,
                      "The slice (default: $SLURM_ARRAY_TASK_ID or $JOB_COMPLETION_INDEX)");
  command->add_option("--python", options->python,
                      "This node's stack Python (default: $CANRUN_PYTHON or the venv)");
  command->add_option("--cache", options->cache,
                      "This node's cache folder (default: $CANRUN_CACHE)");
  command->add_flag("--json", options->json, "Machine-readable output");
  command->callback([registry, options] {
    *registry.action = [options] { return run_worker_command(*options); };
  });
}

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
  command->add_option("--selected", options->selected, "Curated list")->capture_default_str();
  command->add_option("--exclusions", options->exclusions, "Curated exclusions")
      ->capture_default_str();
  command->add_option("--rankings", options->rankings,
                      "Rankings snapshot folder (default: rankings/ in the cache)");
  command->add_option("--top", options->top, "Models of each ranking (downloads, trending)")
      ->capture_default_str();
  command->add_option("--models", options->models,
                      "Test exactly these: a file of \"MODEL [TASK]\" lines");
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
  command->add_flag("--dry-run", options->dry_run, "Print the plan; run nothing");
  command->add_flag("--json", options->json, "Machine-readable output");
  command->add_option("--tokens", options->trial.request.new_tokens, "New tokens per run")
      ->capture_default_str();
  command
      ->add_option("--judge-model", options->trial.request.judge_model,
                   "Judge of sharded runs' output")
      ->capture_default_str();
  command
      ->add_option("--executor", options->executor,
                   "local: run here; slurm: plan into --campaign-dir, write the job array and "
                   "collect job and submit them (sbatch); k8s: write an Indexed Job and the "
                   "collect Job")
      ->check(CLI::IsMember({"local", "slurm", "k8s"}))
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
