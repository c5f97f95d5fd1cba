// A campaign across a fleet (SPEC.md §10): the work planned once into a campaign folder on
// storage every node mounts, cut into slices (one per Slurm array task or Kubernetes index),
// each run by `canrun worker` with the local executor on its node, then collected into the
// dataset. The folder's files are the only shared state (campaign_dir.h), so the state of a
// campaign running anywhere is read from them.
//
//   preview_fleet    the same plan and slices, written nowhere (--dry-run)
//   plan_fleet       plans, cuts the slices (longest expected first onto the lightest slice)
//                    and writes the folder: campaign.json (with the stack planned for, which a
//                    worker's node must match), work.json, slices.json
//   run_worker       (local_campaign.h) runs one slice; idempotent: a requeued or duplicated
//                    worker skips what is done, and only one runs a slice at a time
//   slice_states     each slice: done, running (a worker holds its lock), waiting (nothing
//                    recorded yet) or incomplete (some verdicts, no worker); counts and ETA
//   collect_campaign merges every done slice into the dataset (rows, then their logs), again
//                    and again without harm; reports the others, merging none of their rows
//
// Thread safety: free functions, one thread.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "campaign/local_campaign.h"

namespace canrun::campaign {

struct FleetPlan {
  PlannedWork work;
  std::vector<std::vector<std::size_t>> slices;  //!< item indices per slice
  std::vector<double> slice_expected_s;          //!< each slice's expected run time
};

//! Plans `options` (as a local campaign would, on this machine's stack and core count, which
//! must be the fleet's) and writes the campaign folder with at most `slice_count` slices
//! (fewer when there are fewer items to run). Refuses a folder that already holds a plan.
Result<FleetPlan> plan_fleet(const CampaignOptions& options, std::size_t slice_count,
                             const nlohmann::json& executor, process::ProcessLauncher& launcher);

//! The plan and slices plan_fleet would make, refusing what it refuses, but writing nothing:
//! no campaign folder (a dry run).
Result<FleetPlan> preview_fleet(const CampaignOptions& options, std::size_t slice_count,
                                process::ProcessLauncher& launcher);

//! The campaign options a worker runs a slice with: campaign.json's settings, with the
//! worker's own stack Python and cache.
Result<CampaignOptions> worker_options(const std::filesystem::path& dir, std::string python,
                                       std::filesystem::path cache);

struct SliceState {
  int slice = 0;
  std::string state;  //!< "done", "running", "waiting", "incomplete"
  std::size_t items = 0;
  std::size_t done = 0;
  std::map<std::string, std::size_t> results;  //!< verdict → count
  double remaining_s = 0;                      //!< expected seconds of what is left
  //! Compile cache hits and misses of the slice's runs (each item's last run, or the run
  //! behind a verdict that stood from an earlier campaign in the folder), by the compiler's own
  //! count; both 0 when its backend keeps none.
  std::int64_t cache_hits = 0;
  std::int64_t cache_misses = 0;
  std::size_t cache_counted = 0;  //!< items whose run's counts are known
};

//! Every slice's state, from the folder alone. kNotFound naming `dir` when it is not a folder
//! or holds no campaign.
Result<std::vector<SliceState>> slice_states(const std::filesystem::path& dir);

struct CollectOutcome {
  std::vector<SliceState> slices;
  std::size_t merged_rows = 0;  //!< rows of the done slices written to the dataset
};

//! Merges every done slice's verdicts (and failure logs) into the dataset at `out`.
Result<CollectOutcome> collect_campaign(const std::filesystem::path& dir,
                                        const std::filesystem::path& out);

}  // namespace canrun::campaign
