// The phases of one slice of a campaign (local_campaign.h) before and after its trials run,
// each a function of its own: the work the slice is given (a new plan, a resumed one, or a
// fleet worker's slice) with the verdicts recorded before, what runs now and what stands, the
// rows of excluded items, where each verdict is recorded, the scheduler the trials are packed
// by, and which trials start at once or wait for their checkpoint (fetch_ahead.h). Running the
// trials themselves is staged_runs.h.
//
// Thread safety: free functions over values and folders; VerdictRecorder is used from one
// thread.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backend/profile.h"
#include "campaign/campaign_dir.h"
#include "campaign/core_allocator.h"
#include "campaign/expected_time.h"
#include "campaign/host_budget.h"
#include "campaign/local_campaign.h"
#include "campaign/scheduler.h"
#include "campaign/work.h"
#include "dataset/dataset.h"
#include "dataset/verdict_row.h"
#include "process/process.h"
#include "run/result_line.h"
#include "stack/stack.h"
#include "trial/trial.h"

namespace canrun::campaign {

inline constexpr int kLocalSlice = 0;  //!< a local campaign is a fleet campaign of one slice

//! Which part of a campaign this canrun runs: the whole of a local one (planned here, or
//! resumed), or one slice of a fleet campaign planned before (a worker).
struct SliceRole {
  int slice = kLocalSlice;
  bool worker = false;  //!< results to the folder only: the collect step fills the dataset
};

//! The work a slice is given, and what was done of it before this run.
struct SliceWork {
  std::vector<WorkItem> items;                          //!< the campaign's whole work list
  std::vector<std::size_t> indices;                     //!< the items of this slice
  std::map<std::size_t, dataset::VerdictRow> recorded;  //!< done before this run
  std::vector<std::string> unresolved;                  //!< models left out (a new plan)
  std::vector<std::string> problems;                    //!< result files that did not parse
};

//! A new campaign: the selection planned (plan_work.h) for the machine's `machine_cores`, the
//! plan written to `dir` (the slice's earlier results removed), and the dataset's rows of this
//! stack that stand recorded in the folder (standing_rows).
Result<SliceWork> new_work(const CampaignOptions& options, const CampaignDir& dir, int slice,
                           const backend::BackendProfile& profile, const stack::Stack& stack,
                           int machine_cores, const dataset::DatasetDir& dataset,
                           process::ProcessLauncher& launcher);

//! A campaign resumed (--resume): the work planned in `dir` and its slice's results.
//! kInvalidArgument, naming both backends, when it was planned on another backend.
Result<SliceWork> resumed_work(const CampaignDir& dir, int slice, std::string_view backend);

//! A fleet worker's slice of the campaign planned in `dir`: its items and results.
//! kFailedCheck (check_worker_stack) for another stack, kInvalidArgument for a slice the
//! campaign does not have.
Result<SliceWork> worker_work(const CampaignDir& dir, int slice,
                              const backend::BackendProfile& profile, const stack::Stack& stack);

//! Whether this node's stack is the one the campaign was planned for (campaign.json's
//! compiler_version and library_version); kFailedCheck naming both when not.
Status check_worker_stack(const nlohmann::json& settings, const std::filesystem::path& dir,
                          const backend::BackendProfile& profile, const stack::Stack& stack);

//! The rows of a stack's dataset file that stand for a new campaign on that stack, by item
//! index: a row of the same model and task at the item's planned revision, or the same
//! exclusion for the same reason, in the same words.
std::map<std::size_t, dataset::VerdictRow> standing_rows(
    const std::vector<WorkItem>& items, const std::vector<dataset::VerdictRow>& rows);

//! Whether --retry `retry` ("failed", "all", or "") runs a recorded verdict again. An
//! exclusion is never run again: it was decided before running.
bool needs_retry(const dataset::VerdictRow& row, std::string_view retry);

//! What runs now: excluded items get their row at once; done items stand unless retried.
struct SliceDecision {
  std::map<std::size_t, dataset::VerdictRow> standing;  //!< recorded verdicts kept as they are
  std::vector<std::size_t> to_run;                      //!< in the slice's order
  std::vector<std::size_t> to_exclude;
  RuntimeHistory history;  //!< the recorded runtimes, for the expected times
};
SliceDecision decide_what_runs(const SliceWork& work, std::string_view retry);

//! The row of an item excluded before running (trial::excluded_row): the stack's columns, the
//! reason and why. `item` must be excluded().
dataset::VerdictRow excluded_row(const WorkItem& item, const backend::BackendProfile& profile,
                                 const stack::Stack& stack);

//! What a run leaves beside its verdict.
struct RunTraces {
  std::string log;  //!< stdout and stderr (run::run_log)
  std::optional<run::CompileCacheCounts> compile_cache;
  std::map<std::string, std::filesystem::path> images;  //!< role → PNG
};

//! Where a slice's verdicts go: the campaign folder at once, and for a local campaign the
//! dataset too (a worker's reach the dataset through the collect step).
class VerdictRecorder {
 public:
  //! `dir` and `dataset` must outlive the recorder.
  VerdictRecorder(const CampaignDir& dir, SliceRole role, const dataset::DatasetDir& dataset)
      : dir_(dir), role_(role), dataset_(dataset) {}

  //! Item `index`'s verdict, with its traces, into the folder (and the dataset), and a "done"
  //! event in the journal (with the compile cache's counts when the run had them).
  Status record(std::size_t index, const dataset::VerdictRow& row,
                const RunTraces& traces = {}) const;

  //! Before a resumed local slice runs: the verdicts of `results` (the folder's) that the
  //! dataset does not hold as they are, given to it in one write, with the logs and images
  //! kept in the folder. A canrun killed between a result file and the dataset write left the
  //! dataset behind the folder: the folder's results are the truth. Writes nothing when the
  //! dataset holds them all (the normal path: record() wrote each verdict once).
  Status catch_up_dataset(const std::map<std::size_t, dataset::VerdictRow>& results) const;

 private:
  const CampaignDir& dir_;
  const SliceRole role_;
  const dataset::DatasetDir& dataset_;
};

//! The scheduler a slice's trials are packed by: the machine's cores, within the host's CPUs
//! and memory. Workers asked for beyond the host's CPUs (--cores on `count`) share them: the
//! budget counts them as CPUs, as it counts every worker.
Result<Scheduler> slice_scheduler(CoreAllocator cores, HostResources host);

//! The first jobs of the trials to run: the reference jobs of those whose checkpoint is on this
//! machine (`on_this_machine`) or has no planned revision, to schedule at once; and the device
//! jobs of the others, longest expected first (the order the scheduler prefers), whose
//! checkpoints are fetched in that order and whose reference jobs follow once fetched.
struct FirstJobs {
  std::vector<Job> scheduled;
  std::vector<Job> to_fetch;
};
FirstJobs first_jobs(const std::vector<std::size_t>& to_run, const std::vector<WorkItem>& items,
                     const backend::BackendProfile& profile, const RuntimeHistory& history,
                     const std::function<bool(const WorkItem&)>& on_this_machine);

}  // namespace canrun::campaign
