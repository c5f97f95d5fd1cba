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

#include "campaign/local_campaign.h"
#include "cli/commands.h"
#include "cli/exit_code.h"
#include "cli/table.h"
#include "cli/trial_options.h"
#include "core/json_output.h"
#include "core/log.h"
#include "core/text.h"
#include "dataset/row_json.h"

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

int run_campaign_command(const CampaignCommandOptions& options) {
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
  auto launcher = process::make_posix_launcher();
  if (options.dry_run) {
    CANRUN_ASSIGN_OR_RETURN_EXIT(campaign::PlannedWork work,
                                 campaign::plan_campaign(campaign, *launcher));
    return print_plan(work, options.json);
  }
  ProgressDisplay progress(options.json);
  stop_requested = false;
  ::signal(SIGINT, on_interrupt);
  auto outcome = campaign::run_campaign(campaign, *launcher, progress, stop_requested);
  ::signal(SIGINT, SIG_DFL);
  progress.clear();
  if (!outcome.ok()) return report(outcome.error());
  std::map<std::string, std::size_t> counts;
  for (const auto& [index, row] : outcome->results) ++counts[std::string(to_string(row.result))];
  if (options.json) {
    nlohmann::json out = {{"items", nlohmann::json::array()},
                          {"counts", counts},
                          {"unresolved", outcome->unresolved},
                          {"problems", outcome->problems},
                          {"interrupted", outcome->interrupted},
                          {"wall_s", outcome->wall_s},
                          {"peak_fetched_bytes", outcome->peak_fetched_bytes},
                          {"campaign_dir", fs::absolute(campaign.dir).string()}};
    for (std::size_t index = 0; index < outcome->items.size(); ++index) {
      const auto found = outcome->results.find(index);
      out["items"].push_back(item_json(outcome->items[index],
                                       found == outcome->results.end() ? nullptr : &found->second));
    }
    print_json(std::cout, out);
  } else {
    TextTable table({"MODEL", "TASK", "RESULT", "CORES", "TIME", "WHY"});
    for (std::size_t index = 0; index < outcome->items.size(); ++index) {
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
                             outcome->results.size(), outcome->items.size(), summary,
                             outcome->wall_s, outcome->interrupted ? "; interrupted" : "");
    for (const auto& problem : outcome->unresolved) std::cout << "unresolved: " << problem << "\n";
    for (const auto& problem : outcome->problems) std::cout << "problem: " << problem << "\n";
  }
  if (outcome->interrupted) return 130;
  return outcome->problems.empty() ? kExitOk : kExitFailed;
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
  command->add_option("--selected", options->selected, "Curated list")->capture_default_str();
  command->add_option("--exclusions", options->exclusions, "Curated exclusions")
      ->capture_default_str();
  command->add_option("--rankings", options->rankings,
                      "Rankings snapshot folder (default: rankings/ in the cache)");
  command->add_option("--top", options->top, "Models of each ranking (downloads, trending)")
      ->capture_default_str();
  command->add_option("--models", options->models,
                      "Test exactly these: a file of \"MODEL [TASK]\" lines");
  command->add_option("--out", options->out, "The dataset to record verdicts in")->required();
  command->add_option("--campaign-dir", options->campaign_dir,
                      "The campaign's folder (default: DATASET/.campaign/BACKEND)");
  command->add_option("--cores", options->cores,
                      "Use at most this many cores (CPUs on the cpu backend); default: all");
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
  command->callback([registry, options] {
    *registry.action = [options] { return run_campaign_command(*options); };
  });
}

}  // namespace canrun::cli
