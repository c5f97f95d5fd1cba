// What `canrun campaign` and `canrun worker` print on stdout: the planned work (--dry-run) and
// the outcome, each as a table or as JSON (--json).
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "campaign/fleet.h"
#include "campaign/local_campaign.h"

namespace canrun::cli {

//! Each item with its source, plan (or exclusion) and weights, then what could not be resolved.
//! Returns 0.
int print_plan(const campaign::PlannedWork& work, bool json);

//! What a fleet campaign would do, for its --dry-run, which did none of it.
struct FleetDryRun {
  std::string executor;                //!< its name
  std::filesystem::path campaign_dir;  //!< the folder a run would write the plan to
  std::filesystem::path files_dir;     //!< where a run would write the executor's files
  std::vector<std::string> submit;     //!< the command a run would submit them with; or empty
};

//! A fleet's plan as print_plan prints it, then its slices (items, expected time) and what a
//! run would write and submit, saying that nothing was. Returns 0.
int print_fleet_plan(const campaign::FleetPlan& plan, const FleetDryRun& dry_run, bool json);

//! A campaign's compile cache hit rate, by the compiler's own counts journalled per item
//! (campaign::SliceState), summed over its slices.
struct CampaignHitRate {
  std::int64_t hits = 0;
  std::int64_t misses = 0;
  std::size_t counted = 0;   //!< verdicts whose run's counts are known
  std::size_t verdicts = 0;  //!< verdicts the folder holds
};
CampaignHitRate hit_rate_of(const std::vector<campaign::SliceState>& slices);

//! "2 of 45 graphs found in the cache (4 %), by the compiler's count in the runs of 19 of 28
//! verdicts", or why there is no hit rate.
std::string describe_hit_rate(const CampaignHitRate& rate);

//! {"hits", "misses", "hit_rate" (null when nothing was counted), "counted", "verdicts"}.
nlohmann::json hit_rate_json(const CampaignHitRate& rate);

//! What a campaign or a worker did: the items with their verdicts, then the counts and the
//! problems. Returns the exit code: 130 interrupted, 1 when some trial could not run, else 0.
int print_outcome(const campaign::CampaignOutcome& outcome,
                  const std::filesystem::path& campaign_dir, bool json);

}  // namespace canrun::cli
