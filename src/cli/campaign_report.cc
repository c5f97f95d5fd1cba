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
        {std::to_string(++number), item.model_id.str(), item.task, item.source, describe_item(item),
         item.weights_bytes ? format_bytes(static_cast<std::int64_t>(item.weights_bytes)) : "-",
         item.excluded() ? item.why : ""});
  }
  table.print(std::cout);
  for (const auto& problem : work.unresolved) std::cout << "unresolved: " << problem << "\n";
  return kExitOk;
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
