#include "campaign/local_campaign.h"

#include <chrono>
#include <memory>
#include <string>
#include <system_error>
#include <utility>

#include "campaign/campaign_dir.h"
#include "campaign/fetch_ahead.h"
#include "campaign/host_budget.h"
#include "campaign/job_sizing.h"
#include "campaign/process_journal.h"
#include "campaign/scheduler.h"
#include "campaign/slice_phases.h"
#include "campaign/staged_runs.h"
#include "core/atomic_file.h"
#include "core/log.h"
#include "core/version.h"
#include "dataset/dataset.h"
#include "hub/hf_cache.h"
#include "stack/stack.h"

namespace canrun::campaign {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

}  // namespace

nlohmann::json settings_json(const CampaignOptions& options, const stack::Stack& stack) {
  const auto& trial = options.trial;
  return {{"canrun_version", kCanrunVersion},
          {"backend", trial.backend},
          {"tasks", options.selection.tasks},
          {"out", fs::absolute(options.out).string()},
          {"top", options.selection.top},
          {"tokens", trial.new_tokens},
          {"long_tokens", trial.long_tokens},
          {"perf", trial.perf},
          {"timeout_s", trial.timeout.count()},
          {"memory_per_core_gib", trial.memory_per_core_gib},
          {"reserve_gib", trial.reserve_gib},
          {"judge_model", trial.judge_model},
          {"max_cores", options.max_cores},
          {"disk_budget_bytes", options.disk_budget_bytes},
          {"compiler_version", stack.compiler_version},
          {"library_version", stack.library_version}};
}

Result<CampaignPlan> plan_campaign(const CampaignOptions& options,
                                   process::ProcessLauncher& launcher) {
  CANRUN_ASSIGN_OR_RETURN(backend::BackendProfile profile, trial::trial_profile(options.trial));
  const stack::StackPython python(options.trial.python,
                                  trial::absolute_cache_dir(options.trial) / "stack", launcher);
  CANRUN_ASSIGN_OR_RETURN(stack::Stack stack, stack::probe_stack(python, profile));
  CANRUN_ASSIGN_OR_RETURN(HostResources host, host_resources());
  CANRUN_ASSIGN_OR_RETURN(CoreAllocator cores, machine_cores(profile, options.max_cores, host));
  CANRUN_ASSIGN_OR_RETURN(PlannedWork work,
                          plan_work(options.selection, options.trial, stack.library_version,
                                    cores.capacity(), launcher));
  return CampaignPlan{std::move(work), std::move(stack), std::move(profile)};
}

namespace {

Result<CampaignOutcome> run_slice(const CampaignOptions& options, SliceRole role,
                                  process::ProcessLauncher& launcher, CampaignObserver& observer,
                                  const std::atomic<bool>& stop) {
  const auto started = Clock::now();
  const int slice = role.slice;
  const CampaignDir dir(fs::absolute(options.dir));
  std::error_code error;
  fs::create_directories(dir.root(), error);
  CANRUN_ASSIGN_OR_RETURN(FileLock lock, role.worker ? dir.lock_slice(slice) : dir.lock());
  // Every process of this campaign's runs carries the folder, so a later canrun can tell them.
  mark_campaign_processes(dir.root());
  if (const int killed = end_leftover_processes(dir.root(), slice); killed > 0) {
    log::warning("ended {} process(es) left by an earlier canrun of this campaign", killed);
  }
  TrackingLauncher tracking(launcher, dir, slice);

  // The machine and its stack.
  CANRUN_ASSIGN_OR_RETURN(backend::BackendProfile profile, trial::trial_profile(options.trial));
  const stack::StackPython python(options.trial.python,
                                  trial::absolute_cache_dir(options.trial) / "stack", tracking);
  CANRUN_ASSIGN_OR_RETURN(stack::Stack stack, stack::probe_stack(python, profile));
  const dataset::DatasetDir dataset(options.out);
  CANRUN_ASSIGN_OR_RETURN(HostResources host, host_resources());
  CANRUN_ASSIGN_OR_RETURN(CoreAllocator cores, machine_cores(profile, options.max_cores, host));

  // The work of this slice, what was done of it before, and what runs now.
  const auto given = [&]() -> Result<SliceWork> {
    if (role.worker) return worker_work(dir, slice, profile, stack);
    if (options.resume && dir.planned()) return resumed_work(dir, slice, options.trial.backend);
    return new_work(options, dir, slice, profile, stack, cores.capacity(), dataset, tracking);
  };
  CANRUN_ASSIGN_OR_RETURN(SliceWork work, given());
  const VerdictRecorder recorder(dir, role, dataset);
  if (!role.worker) CANRUN_RETURN_IF_ERROR(recorder.catch_up_dataset(work.recorded));
  SliceDecision decision = decide_what_runs(work, options.retry);
  decision.history.set_how_well(options.trial.perf || options.trial.long_tokens > 0);
  CampaignOutcome outcome;
  outcome.items = std::move(work.items);
  outcome.indices = work.indices;
  outcome.unresolved = std::move(work.unresolved);
  outcome.problems = std::move(work.problems);
  outcome.results = std::move(decision.standing);
  observer.planned(outcome.items, decision.to_run.size() + decision.to_exclude.size());

  // Excluded items get their row at once.
  for (std::size_t index : decision.to_exclude) {
    if (stop) break;
    dataset::VerdictRow row = excluded_row(outcome.items[index], profile, stack);
    CANRUN_RETURN_IF_ERROR(recorder.record(index, row));
    outcome.results[index] = std::move(row);
    observer.finished(outcome.items[index], outcome.results[index]);
  }

  // Checkpoints on this machine are scheduled at once; the others once fetched, in the order
  // the scheduler prefers (longest expected first).
  CANRUN_ASSIGN_OR_RETURN(Scheduler scheduler, slice_scheduler(std::move(cores), host));
  const hub::HfCache hf_cache = hub::HfCache::from_environment();
  FirstJobs jobs = first_jobs(decision.to_run, outcome.items, profile, decision.history,
                              [&](const WorkItem& item) { return in_hf_cache(item, hf_cache); });
  for (Job& job : jobs.scheduled) CANRUN_RETURN_IF_ERROR(scheduler.add(std::move(job)));
  std::unique_ptr<FetchAhead> fetching;
  if (!jobs.to_fetch.empty()) {
    CANRUN_ASSIGN_OR_RETURN(fetching, FetchAhead::open(dir, slice, options.disk_budget_bytes));
    for (const Job& job : jobs.to_fetch) {
      const std::size_t index = stage_of(job.id).index;
      CANRUN_RETURN_IF_ERROR(fetching->enqueue(index, outcome.items[index]));
      (void)dir.journal(slice, {{"event", "fetch"}, {"item", index}});
    }
  }

  // The trials, in their stages.
  const SliceRun run{.request = options.trial,
                     .profile = profile,
                     .stack = stack,
                     .dir = dir,
                     .slice = slice,
                     .history = decision.history,
                     .recorded = work.recorded,
                     .recorder = recorder,
                     .launcher = tracking,
                     .observer = observer,
                     .stop = stop,
                     .started = started};
  const Status ran = run_staged_trials(run, scheduler, fetching.get(), jobs.to_fetch, outcome);
  if (fetching) outcome.peak_fetched_bytes = fetching->peak_bytes();
  CANRUN_RETURN_IF_ERROR(ran);
  outcome.wall_s = std::chrono::duration<double>(Clock::now() - started).count();
  return outcome;
}

}  // namespace

Result<CampaignOutcome> run_campaign(const CampaignOptions& options,
                                     process::ProcessLauncher& launcher, CampaignObserver& observer,
                                     const std::atomic<bool>& stop) {
  return run_slice(options, SliceRole{}, launcher, observer, stop);
}

Result<CampaignOutcome> run_worker(const CampaignOptions& options, int slice,
                                   process::ProcessLauncher& launcher, CampaignObserver& observer,
                                   const std::atomic<bool>& stop) {
  return run_slice(options, SliceRole{slice, true}, launcher, observer, stop);
}

}  // namespace canrun::campaign
