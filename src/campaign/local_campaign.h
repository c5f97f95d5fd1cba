// A campaign on this machine (SPEC.md §10): plan the work (plan_work.h) into a campaign folder
// (campaign_dir.h), then run its trials packed onto the machine's cores and within its host
// CPUs and memory (scheduler.h), each verdict written at once to the folder and the dataset.
//
// Durable: a campaign killed at any moment (kill -9 included) and run again with `resume`
// continues from the results in its folder, first ending any process of a run the killed canrun
// left (process_journal.h: found through the journal and the CANRUN_CAMPAIGN variable each run
// inherits). A stop request (Ctrl-C) kills the running trials' process groups and records
// nothing half done.
//
// Thread safety: run_campaign is called from one thread; it runs trials on threads of its own
// and calls the observer from its own thread only.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "backend/profile.h"
#include "campaign/plan_work.h"
#include "campaign/work.h"
#include "dataset/verdict_row.h"
#include "process/process.h"
#include "stack/stack.h"
#include "trial/trial.h"

namespace canrun::campaign {

struct CampaignOptions {
  Selection selection;
  trial::TrialRequest trial;  //!< backend, stack Python, cache, tokens, timeout, memory
  std::filesystem::path out;  //!< the dataset
  std::filesystem::path dir;  //!< the campaign folder
  int max_cores = 0;          //!< at most this many cores (or CPUs on `count`); 0: all
  //! Checkpoints not in the HF cache are fetched ahead of their runs within this many bytes of
  //! the cache (evicting what the campaign fetched and no pending test needs); 0: no limit.
  std::uint64_t disk_budget_bytes = 0;
  bool resume = false;  //!< continue the campaign planned in `dir`
  std::string retry;    //!< "failed": re-run non-PASS verdicts; "all": every one
};

//! How the campaign goes, for a progress display. Called from run_campaign's thread.
class CampaignObserver {
 public:
  virtual ~CampaignObserver() = default;
  virtual void planned(const std::vector<WorkItem>& /*items*/, std::size_t /*to_run*/) {}
  virtual void started(const WorkItem& /*item*/, const std::string& /*cores*/) {}
  //! Its device stage is over; its verification runs on the host, by `evidence`: "CPU
  //! reference" (one core), "CPU reference, judge" or "CPU reference, agreement" (sharded).
  virtual void verifying(const WorkItem& /*item*/, std::string_view /*evidence*/) {}
  virtual void finished(const WorkItem& /*item*/, const dataset::VerdictRow& /*row*/) {}
  virtual void failed(const WorkItem& /*item*/, const Error& /*error*/) {}
  //! About once a second while trials run.
  virtual void tick() {}
};

struct CampaignOutcome {
  std::vector<WorkItem> items;
  std::vector<std::size_t> indices;                    //!< the items this run was given
  std::map<std::size_t, dataset::VerdictRow> results;  //!< item index → verdict
  std::vector<std::string> unresolved;                 //!< models left out (planning)
  std::vector<std::string> problems;                   //!< trials that could not run
  bool interrupted = false;
  double wall_s = 0;
  std::uint64_t peak_fetched_bytes = 0;  //!< the most the campaign's downloads held at once
};

//! What planning found: the work, and the stack and profile it was planned for.
struct CampaignPlan {
  PlannedWork work;
  stack::Stack stack;
  backend::BackendProfile profile;
};

//! Plans only (for --dry-run and fleet campaigns): the work, and what a new campaign would run.
Result<CampaignPlan> plan_campaign(const CampaignOptions& options,
                                   process::ProcessLauncher& launcher);

//! campaign.json: the options and the stack a campaign was planned with.
nlohmann::json settings_json(const CampaignOptions& options, const stack::Stack& stack);

Result<CampaignOutcome> run_campaign(const CampaignOptions& options,
                                     process::ProcessLauncher& launcher, CampaignObserver& observer,
                                     const std::atomic<bool>& stop);

//! One slice of a fleet campaign planned in options.dir (fleet.h), as `canrun worker` runs it:
//! its verdicts (and failure logs) go to the folder only; the collect step fills the dataset.
//! Holds the slice's lock (a second worker of the same slice is refused), skips items already
//! done (a requeued worker continues), and refuses a node whose stack is not the one planned.
Result<CampaignOutcome> run_worker(const CampaignOptions& options, int slice,
                                   process::ProcessLauncher& launcher, CampaignObserver& observer,
                                   const std::atomic<bool>& stop);

}  // namespace canrun::campaign
