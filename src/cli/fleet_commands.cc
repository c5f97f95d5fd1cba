#include "cli/fleet_commands.h"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <map>

#include "cache/sync.h"
#include "campaign/executors.h"
#include "campaign/fleet.h"
#include "cli/campaign_report.h"
#include "cli/exit_code.h"
#include "cli/table.h"
#include "core/atomic_file.h"
#include "core/cache_dir.h"
#include "core/json_output.h"
#include "process/process.h"

namespace canrun::cli {
namespace {

namespace fs = std::filesystem;

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

}  // namespace

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
  for (const auto& slice : slices) {
    eta = std::max(eta, slice.remaining_s);
    for (const auto& [result, count] : slice.results) counts[result] += count;
  }
  const CampaignHitRate rate = hit_rate_of(slices);
  if (json) {
    print_json(std::cout, {{"slices", slices_json(slices)},
                           {"results", counts},
                           {"eta_s", eta},
                           {"compile_cache", hit_rate_json(rate)}});
    return kExitOk;
  }
  print_slices(slices);
  std::cout << fmt::format("results: {}; expected left: {:.0f} s (the slowest slice)\n",
                           describe_counts(counts), eta);
  std::cout << "compile cache: " << describe_hit_rate(rate) << "\n";
  return kExitOk;
}

int run_fleet(const CampaignCommandOptions& options, const campaign::Executor& executor,
              const campaign::CampaignOptions& campaign) {
  const std::string name(executor.name());
  if (options.campaign_dir.empty()) {
    return report(invalid_argument("--executor " + name +
                                   " needs --campaign-dir DIR on storage every node mounts (the "
                                   "slices and results go there)"));
  }
  auto launcher = process::make_posix_launcher();
  nlohmann::json settings = {{"kind", name}};
  if (!options.compile_cache.empty()) {
    CANRUN_ASSIGN_OR_RETURN_EXIT(const cache::CacheLocation shared,
                                 cache::parse_location(options.compile_cache));
    settings["compile_cache"] =
        shared.is_bucket() ? shared.bucket_uri : fs::absolute(shared.local).string();
  }
  campaign::ExecutorOptions fleet = options.fleet;
  fleet.campaign_dir = fs::absolute(campaign.dir);
  fleet.out = fs::absolute(campaign.out);
  const fs::path where = options.emit.empty() ? fleet.campaign_dir / name : fs::path(options.emit);
  if (options.dry_run) {
    // The plan and its slices, from the same planning; no folder, no file, no scheduler.
    CANRUN_ASSIGN_OR_RETURN_EXIT(campaign::FleetPlan plan,
                                 campaign::preview_fleet(campaign, options.slices, *launcher));
    return print_fleet_plan(
        plan,
        {name, fleet.campaign_dir, where,
         options.emit.empty() ? executor.submit_command(where) : std::vector<std::string>{}},
        options.json);
  }
  CANRUN_ASSIGN_OR_RETURN_EXIT(campaign::FleetPlan plan,
                               campaign::plan_fleet(campaign, options.slices, settings, *launcher));
  // Nodes on shared storage (Slurm's) run this very executable unless told otherwise; a pod
  // runs the canrun of its image.
  if (executor.nodes_run_this_canrun() && !options.canrun_given) {
    fleet.canrun = (executable_dir() / "canrun").string();
  }
  CANRUN_ASSIGN_OR_RETURN_EXIT(backend::BackendProfile profile,
                               trial::trial_profile(campaign.trial));
  const std::map<std::string, std::string> files = executor.files(plan, profile, fleet);
  std::error_code error;
  fs::create_directories(where, error);
  for (const fs::path& folder : executor.folders(fleet)) fs::create_directories(folder, error);
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
                           name, where.string());
  const std::vector<std::string> command = executor.submit_command(where);
  if (command.empty() || !options.emit.empty()) return kExitOk;
  // Submit (Slurm: the array, then the collect job once every task ended).
  process::ProcessSpec submit;
  submit.argv = command;
  submit.env = process::current_environment();  // the scheduler passes it on to the jobs
  submit.timeout = std::chrono::seconds(120);
  auto submitted = launcher->run(submit);
  if (!submitted.ok()) return report(submitted.error());
  if (submitted->exit_code != 0) {
    return report(Error(ErrorCode::kFailedCheck,
                        fmt::format("submitting with {} failed (exit {}): {}", name,
                                    submitted->exit_code.value_or(-1), submitted->stderr_tail)));
  }
  std::cout << "submitted: " << submitted->stdout_tail;
  return kExitOk;
}

}  // namespace canrun::cli
