// A slice's trials run in their three stages (job_sizing.h), each a Scheduler job of its own:
// the CPU reference on the host, the run on the cores the scheduler grants, the verification on
// the host again; each stage on a thread of its own, the loop that starts them and records
// their verdicts on the caller's thread.
//
// Thread safety: run_staged_trials is called from one thread; the stage functions may be
// called from any thread (each on its own trial).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <map>
#include <vector>

#include "backend/profile.h"
#include "campaign/campaign_dir.h"
#include "campaign/core_allocator.h"
#include "campaign/expected_time.h"
#include "campaign/fetch_ahead.h"
#include "campaign/local_campaign.h"
#include "campaign/process_journal.h"
#include "campaign/scheduler.h"
#include "campaign/slice_phases.h"
#include "campaign/work.h"
#include "dataset/verdict_row.h"
#include "process/process.h"
#include "stack/stack.h"
#include "trial/trial.h"

namespace canrun::campaign {

//! A trial between its stages: prepared, with its CPU reference once the reference stage ran,
//! and (once its device stage ran) how that went.
struct Staged {
  trial::PreparedTrial trial;
  trial::DeviceRun device;
};

//! One planned trial's reference stage, on the host: prepared (its plan as planned), and its
//! CPU reference found or computed, so that its run.py is given the reference's tokens.
Result<Staged> reference_stage(const WorkItem& item, const trial::TrialRequest& request,
                               const backend::BackendProfile& profile, const stack::Stack& stack,
                               process::ProcessLauncher& launcher);

//! One trial's device stage, on its cores, after its reference stage.
Result<Staged> device_stage(Staged staged, const backend::BackendProfile& profile,
                            const CoreGrant& grant, process::ProcessLauncher& launcher);

//! One trial's host stage, after a device stage that generated: its verdict decided (the
//! comparison with the reference, or the judge), in device.outcome; device.report unset.
Result<Staged> verify_stage(Staged staged, process::ProcessLauncher& launcher);

//! What the trials of a slice run with; every reference outlives run_staged_trials.
struct SliceRun {
  const trial::TrialRequest& request;
  const backend::BackendProfile& profile;
  const stack::Stack& stack;
  const CampaignDir& dir;
  int slice = kLocalSlice;
  const RuntimeHistory& history;
  //! Verdicts recorded before this run: one run again (--retry) says whether it held.
  const std::map<std::size_t, dataset::VerdictRow>& recorded;
  const VerdictRecorder& recorder;
  TrackingLauncher& launcher;
  CampaignObserver& observer;
  const std::atomic<bool>& stop;
  std::chrono::steady_clock::time_point started;  //!< the scheduler's clock starts here
};

//! Runs the jobs `scheduler` holds, and those of the checkpoints `fetching` (may be null)
//! fetches once fetched (`to_fetch`: their device jobs), until all are done, `run.stop` is set
//! or recording a verdict fails. Verdicts go to run.recorder and outcome.results; trials that
//! could not run to outcome.problems. On a stop or a failure every running process is killed
//! and nothing half done is recorded (outcome.interrupted says a stop). Returns after every
//! stage's thread ended.
Status run_staged_trials(const SliceRun& run, Scheduler& scheduler, FetchAhead* fetching,
                         const std::vector<Job>& to_fetch, CampaignOutcome& outcome);

}  // namespace canrun::campaign
