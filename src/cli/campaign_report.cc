#include "cli/campaign_report.h"

#include <fmt/format.h>

#include <iostream>
#include <map>

#include "cli/exit_code.h"
#include "cli/table.h"
#include "core/json_output.h"
#include "core/text.h"

namespace canrun::cli {
namespace {

namespace fs = std::filesystem;

std::string describe_item(const campaign::WorkItem& item) {
  if (item.excluded()) return fmt::format("excluded: {}", *item.exclusion_reason);
  return fmt::format("{} core{} ({})", item.cores, item.cores == 1 ? "" : "s",
                     to_string(item.parallelism));
}

nlohmann::json item_json(const campaign::WorkItem& item, const dataset::VerdictRow* row) {
  nlohmann::json out = campaign::work_item_to_json(item);
  out["result"] = row ? nlohmann::json(to_string(row->result)) : nlohmann::json();
  out["runtime_s"] = row && row->runtime_s ? nlohmann::json(*row->runtime_s) : nlohmann::json();
  return out;
}

//! The verdict of item `index`, or null when it has none.
const dataset::VerdictRow* verdict_of(const campaign::CampaignOutcome& outcome, std::size_t index) {
  const auto found = outcome.results.find(index);
  return found == outcome.results.end() ? nullptr : &found->second;
}

}  // namespace

namespace {

nlohmann::json plan_json(const campaign::PlannedWork& work) {
  nlohmann::json out = {{"items", nlohmann::json::array()}, {"unresolved", work.unresolved}};
  for (const auto& item : work.items) out["items"].push_back(item_json(item, nullptr));
  return out;
}

void print_plan_table(const campaign::PlannedWork& work) {
  TextTable table({"#", "MODEL", "TASK", "SOURCE", "PLAN", "WEIGHTS", "WHY"});
  std::size_t number = 0;
  for (const auto& item : work.items) {
    table.add(
        {std::to_string(++number), item.model_id.str(), item.task, item.source, describe_item(item),
         item.weights_bytes ? format_bytes(static_cast<std::int64_t>(item.weights_bytes)) : "-",
         item.excluded() ? item.why : ""});
  }
  table.print(std::cout);
  for (const auto& problem : work.unresolved) std::cout << "unresolved: " << problem << "\n";
}

}  // namespace

int print_plan(const campaign::PlannedWork& work, bool json) {
  if (json) {
    print_json(std::cout, plan_json(work));
    return kExitOk;
  }
  print_plan_table(work);
  return kExitOk;
}

int print_fleet_plan(const campaign::FleetPlan& plan, const FleetDryRun& dry_run, bool json) {
  if (json) {
    nlohmann::json out = plan_json(plan.work);
    out["dry_run"] = true;
    out["executor"] = dry_run.executor;
    out["campaign_dir"] = dry_run.campaign_dir.string();
    out["files_dir"] = dry_run.files_dir.string();
    out["submit"] = dry_run.submit.empty() ? nlohmann::json() : nlohmann::json(dry_run.submit);
    out["slices"] = nlohmann::json::array();
    for (std::size_t slice = 0; slice < plan.slices.size(); ++slice) {
      out["slices"].push_back({{"slice", slice},
                               {"items", plan.slices[slice]},
                               {"expected_s", plan.slice_expected_s[slice]}});
    }
    print_json(std::cout, out);
    return kExitOk;
  }
  print_plan_table(plan.work);
  TextTable table({"SLICE", "ITEMS", "EXPECTED"});
  for (std::size_t slice = 0; slice < plan.slices.size(); ++slice) {
    table.add({std::to_string(slice), std::to_string(plan.slices[slice].size()),
               fmt::format("{:.0f} s", plan.slice_expected_s[slice])});
  }
  table.print(std::cout);
  std::string submit;
  for (const std::string& word : dry_run.submit) submit += (submit.empty() ? "" : " ") + word;
  std::cout << fmt::format(
      "dry run: nothing written, nothing submitted; a run would write the plan to {} and {}'s "
      "files to {}{}\n",
      dry_run.campaign_dir.string(), dry_run.executor, dry_run.files_dir.string(),
      submit.empty() ? "" : fmt::format(", then submit them ({})", submit));
  return kExitOk;
}

CampaignHitRate hit_rate_of(const std::vector<campaign::SliceState>& slices) {
  CampaignHitRate rate;
  for (const auto& slice : slices) {
    rate.hits += slice.cache_hits;
    rate.misses += slice.cache_misses;
    rate.counted += slice.cache_counted;
    rate.verdicts += slice.done;
  }
  return rate;
}

std::string describe_hit_rate(const CampaignHitRate& rate) {
  if (rate.counted == 0) {
    return fmt::format(
        "no hit rate: no run behind its {} verdict{} reported the compiler's cache counts "
        "(exclusions, verdicts that stood from a campaign in another folder, or a backend that "
        "keeps no count)",
        rate.verdicts, rate.verdicts == 1 ? "" : "s");
  }
  const std::int64_t all = rate.hits + rate.misses;
  return fmt::format(
      "{} of {} graphs found in the cache ({}), by the compiler's count in the runs of {} of {} "
      "verdicts",
      rate.hits, all,
      all > 0 ? fmt::format("{:.0f} %",
                            100.0 * static_cast<double>(rate.hits) / static_cast<double>(all))
              : "-",
      rate.counted, rate.verdicts);
}

nlohmann::json hit_rate_json(const CampaignHitRate& rate) {
  const std::int64_t all = rate.hits + rate.misses;
  return {{"hits", rate.hits},
          {"misses", rate.misses},
          {"hit_rate",
           all > 0 ? nlohmann::json(static_cast<double>(rate.hits) / static_cast<double>(all))
                   : nlohmann::json()},
          {"counted", rate.counted},
          {"verdicts", rate.verdicts}};
}

int print_outcome(const campaign::CampaignOutcome& outcome, const fs::path& campaign_dir,
                  bool json) {
  std::map<std::string, std::size_t> counts;
  for (const auto& [index, row] : outcome.results) ++counts[std::string(to_string(row.result))];
  if (json) {
    nlohmann::json out = {{"items", nlohmann::json::array()},
                          {"counts", counts},
                          {"unresolved", outcome.unresolved},
                          {"problems", outcome.problems},
                          {"interrupted", outcome.interrupted},
                          {"wall_s", outcome.wall_s},
                          {"peak_fetched_bytes", outcome.peak_fetched_bytes},
                          {"campaign_dir", fs::absolute(campaign_dir).string()}};
    for (const std::size_t index : outcome.indices) {
      out["items"].push_back(item_json(outcome.items[index], verdict_of(outcome, index)));
    }
    print_json(std::cout, out);
  } else {
    TextTable table({"MODEL", "TASK", "RESULT", "CORES", "TIME", "WHY"});
    for (const std::size_t index : outcome.indices) {
      const auto& item = outcome.items[index];
      const dataset::VerdictRow* row = verdict_of(outcome, index);
      table.add({item.model_id.str(), item.task,
                 row ? std::string(to_string(row->result)) : "not run",
                 row && row->cores ? std::to_string(*row->cores) : "-",
                 row && row->runtime_s ? fmt::format("{:.1f} s", *row->runtime_s) : "-",
                 row && row->exclusion_reason ? *row->exclusion_reason : ""});
    }
    table.print(std::cout);
    std::string summary;
    for (const auto& [result, count] : counts) summary += fmt::format(" {} {}", result, count);
    std::cout << fmt::format("{} of {} items have a verdict:{} ({:.0f} s){}\n",
                             outcome.results.size(), outcome.indices.size(), summary,
                             outcome.wall_s, outcome.interrupted ? "; interrupted" : "");
    for (const auto& problem : outcome.unresolved) std::cout << "unresolved: " << problem << "\n";
    for (const auto& problem : outcome.problems) std::cout << "problem: " << problem << "\n";
  }
  if (outcome.interrupted) return 130;
  return outcome.problems.empty() ? kExitOk : kExitFailed;
}

}  // namespace canrun::cli
