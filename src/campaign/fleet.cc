#include "campaign/fleet.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "campaign/campaign_dir.h"
#include "campaign/expected_time.h"
#include "dataset/dataset.h"

namespace canrun::campaign {
namespace {

namespace fs = std::filesystem;

//! What an item is expected to take on its node (excluded ones: nothing to run).
double item_seconds(const WorkItem& item, const std::string& backend) {
  if (item.excluded()) return 0;
  return expected_seconds(TestSize{item.model_id.str(), backend, item.weights_bytes, item.cores});
}

}  // namespace

namespace {

//! A fleet's plan and the stack it was planned on (for campaign.json).
struct PlannedFleet {
  FleetPlan fleet;
  stack::Stack stack;
};

//! Plans `options` and cuts the slices; writes nothing.
Result<PlannedFleet> plan_slices(const CampaignOptions& options, std::size_t slice_count,
                                 process::ProcessLauncher& launcher) {
  if (slice_count == 0) return invalid_argument("--slices must be at least 1");
  const CampaignDir dir(fs::absolute(options.dir));
  if (dir.planned()) {
    return invalid_argument(
        fmt::format("campaign folder {} already holds a campaign; give a "
                    "new --campaign-dir, or collect and remove that one",
                    dir.root().string()));
  }
  CANRUN_ASSIGN_OR_RETURN(CampaignPlan plan, plan_campaign(options, launcher));
  FleetPlan fleet{std::move(plan.work), {}, {}};
  const auto& items = fleet.work.items;
  std::vector<double> seconds(items.size());
  std::size_t runnable = 0;
  for (std::size_t index = 0; index < items.size(); ++index) {
    seconds[index] = item_seconds(items[index], plan.profile.name);
    runnable += !items[index].excluded();
  }
  // Longest expected first, each onto the slice expected to end first (ties: fewer items),
  // so the slices end close together; excluded items (no run) spread by count.
  const std::size_t count = std::max<std::size_t>(1, std::min(slice_count, runnable));
  fleet.slices.assign(count, {});
  fleet.slice_expected_s.assign(count, 0);
  std::vector<std::size_t> order(items.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return seconds[a] > seconds[b]; });
  for (const std::size_t index : order) {
    std::size_t lightest = 0;
    for (std::size_t slice = 1; slice < count; ++slice) {
      const auto load = [&](std::size_t s) {
        return std::pair(fleet.slice_expected_s[s], fleet.slices[s].size());
      };
      if (load(slice) < load(lightest)) lightest = slice;
    }
    fleet.slices[lightest].push_back(index);
    fleet.slice_expected_s[lightest] += seconds[index];
  }
  for (auto& slice : fleet.slices) std::sort(slice.begin(), slice.end());
  return PlannedFleet{std::move(fleet), std::move(plan.stack)};
}

}  // namespace

Result<FleetPlan> preview_fleet(const CampaignOptions& options, std::size_t slice_count,
                                process::ProcessLauncher& launcher) {
  CANRUN_ASSIGN_OR_RETURN(PlannedFleet planned, plan_slices(options, slice_count, launcher));
  return std::move(planned.fleet);
}

Result<FleetPlan> plan_fleet(const CampaignOptions& options, std::size_t slice_count,
                             const nlohmann::json& executor, process::ProcessLauncher& launcher) {
  CANRUN_ASSIGN_OR_RETURN(PlannedFleet planned, plan_slices(options, slice_count, launcher));
  const CampaignDir dir(fs::absolute(options.dir));
  nlohmann::json settings = settings_json(options, planned.stack);
  settings["executor"] = executor;
  settings["slices"] = planned.fleet.slices.size();
  CANRUN_RETURN_IF_ERROR(dir.write_plan(settings, planned.fleet.work.items));
  CANRUN_RETURN_IF_ERROR(dir.write_slices(planned.fleet.slices));
  return std::move(planned.fleet);
}

Result<CampaignOptions> worker_options(const fs::path& dir, std::string python, fs::path cache) {
  const CampaignDir campaign(fs::absolute(dir));
  if (!campaign.planned()) {
    return not_found(
        fmt::format("{} holds no planned campaign (no work.json): plan it with "
                    "canrun campaign --executor ... --campaign-dir {}",
                    campaign.root().string(), dir.string()));
  }
  CANRUN_ASSIGN_OR_RETURN(nlohmann::json settings, campaign.read_settings());
  CampaignOptions options;
  options.dir = campaign.root();
  try {
    options.trial.backend = settings.at("backend").get<std::string>();
    options.trial.new_tokens = settings.at("tokens").get<int>();
    // A campaign planned before canrun measured how well: neither.
    options.trial.long_tokens = settings.value("long_tokens", 0);
    options.trial.perf = settings.value("perf", false);
    options.trial.timeout = std::chrono::seconds(settings.at("timeout_s").get<std::int64_t>());
    options.trial.memory_per_core_gib = settings.at("memory_per_core_gib").get<double>();
    options.trial.reserve_gib = settings.at("reserve_gib").get<double>();
    options.trial.judge_model = settings.value("judge_model", options.trial.judge_model);
    options.selection.tasks = settings.at("tasks").get<std::vector<std::string>>();
    options.out = settings.at("out").get<std::string>();
    options.max_cores = settings.value("max_cores", 0);
    options.disk_budget_bytes = settings.value("disk_budget_bytes", std::uint64_t{0});
  } catch (const nlohmann::json::exception& error) {
    return corrupt(fmt::format("{}/campaign.json: {}", campaign.root().string(), error.what()));
  }
  options.trial.model = "-";
  options.trial.python = std::move(python);
  options.trial.cache_dir = std::move(cache);
  return options;
}

Result<std::vector<SliceState>> slice_states(const fs::path& dir) {
  const CampaignDir campaign(fs::absolute(dir));
  std::error_code error;
  if (!fs::is_directory(campaign.root(), error)) {
    return not_found(fmt::format("no campaign folder {}", dir.string()));
  }
  if (!fs::exists(campaign.root() / "campaign.json", error)) {
    return not_found(
        fmt::format("{} holds no campaign (no campaign.json): give the folder a campaign was "
                    "planned in (--campaign-dir, or DATASET/.campaign/BACKEND)",
                    dir.string()));
  }
  CANRUN_ASSIGN_OR_RETURN(nlohmann::json settings, campaign.read_settings());
  CANRUN_ASSIGN_OR_RETURN(std::vector<WorkItem> items, campaign.read_work());
  CANRUN_ASSIGN_OR_RETURN(auto slices, campaign.read_slices(items.size()));
  const std::string backend = settings.value("backend", "");
  std::vector<SliceState> states;
  for (std::size_t slice = 0; slice < slices.size(); ++slice) {
    const int number = static_cast<int>(slice);
    CANRUN_ASSIGN_OR_RETURN(auto results, campaign.read_results(number));
    SliceState state;
    state.slice = number;
    state.items = slices[slice].size();
    for (const std::size_t index : slices[slice]) {
      const auto found = results.find(index);
      if (found == results.end()) {
        state.remaining_s += item_seconds(items[index], backend);
        continue;
      }
      ++state.done;
      ++state.results[std::string(to_string(found->second.result))];
    }
    // Each item's last run: a requeued or retried item counts once; a verdict that stood from
    // an earlier campaign in the folder counts its run's ("stood"), a run without counts none.
    std::map<std::size_t, std::pair<std::int64_t, std::int64_t>> cache;
    for (const nlohmann::json& event : campaign.read_journal(number)) {
      const std::string kind = event.value("event", "");
      if (kind != "done" && kind != "stood") continue;
      const std::size_t item = event.value("item", std::size_t{0});
      const auto counts = event.find("compile_cache");
      if (counts == event.end() || !counts->is_object()) {
        cache.erase(item);
        continue;
      }
      cache[item] = {counts->value("hits", std::int64_t{0}),
                     counts->value("misses", std::int64_t{0})};
    }
    for (const auto& [item, counts] : cache) {
      state.cache_hits += counts.first;
      state.cache_misses += counts.second;
    }
    state.cache_counted = cache.size();
    if (campaign.slice_running(number)) {
      state.state = "running";
    } else if (state.done == state.items) {
      state.state = "done";
    } else {
      state.state = state.done == 0 ? "waiting" : "incomplete";
    }
    states.push_back(std::move(state));
  }
  return states;
}

Result<CollectOutcome> collect_campaign(const fs::path& dir, const fs::path& out) {
  const CampaignDir campaign(fs::absolute(dir));
  CollectOutcome outcome;
  CANRUN_ASSIGN_OR_RETURN(outcome.slices, slice_states(dir));
  CANRUN_ASSIGN_OR_RETURN(std::vector<WorkItem> items, campaign.read_work());
  CANRUN_ASSIGN_OR_RETURN(auto slices, campaign.read_slices(items.size()));
  const dataset::DatasetDir dataset(out);
  for (const SliceState& state : outcome.slices) {
    if (state.state != "done") continue;
    CANRUN_ASSIGN_OR_RETURN(auto results, campaign.read_results(state.slice));
    const auto& indices = slices[static_cast<std::size_t>(state.slice)];
    std::vector<dataset::VerdictRow> rows;
    for (const std::size_t index : indices) rows.push_back(results.at(index));
    // All or nothing per slice: its rows in one write (one stack), then their logs.
    CANRUN_RETURN_IF_ERROR(dataset.upsert(rows));
    for (std::size_t at = 0; at < indices.size(); ++at) {
      CANRUN_RETURN_IF_ERROR(
          dataset.record_log(rows[at], campaign.read_log(state.slice, indices[at])));
      CANRUN_RETURN_IF_ERROR(
          dataset.record_images(rows[at], campaign.read_images(state.slice, indices[at])));
    }
    outcome.merged_rows += rows.size();
  }
  return outcome;
}

}  // namespace canrun::campaign
