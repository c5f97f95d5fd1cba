#include "campaign/staged_runs.h"

#include <fmt/format.h>

#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "campaign/job_sizing.h"
#include "run/script_run.h"

namespace canrun::campaign {

Result<Staged> reference_stage(const WorkItem& item, const trial::TrialRequest& request,
                               const backend::BackendProfile& profile, const stack::Stack& stack,
                               process::ProcessLauncher& launcher) {
  trial::TrialRequest planned = request;
  planned.model = item.model_id.str();
  planned.revision = item.revision.empty() ? "main" : item.revision;
  planned.task = item.task;
  trial::TrialPlan plan;
  plan.cores = item.cores;
  plan.parallelism = item.parallelism;
  plan.stack_plan = item.stack_plan;
  if (!plan.stack_plan) {  // a work list written before items kept their plan
    plan.stack_plan.emplace();
    plan.stack_plan->shards.weights_bytes = item.weights_bytes;
  }
  // As planning resolved it; a work list written before items kept it is resolved again.
  CANRUN_ASSIGN_OR_RETURN(trial::Checkpoint checkpoint,
                          item.checkpoint
                              ? Result<trial::Checkpoint>(trial::located(*item.checkpoint))
                              : trial::resolve_checkpoint({planned.model, planned.revision, {}}));
  Staged staged;
  CANRUN_ASSIGN_OR_RETURN(staged.trial,
                          trial::prepare_planned(planned, profile, std::move(checkpoint),
                                                 stack.library_version, std::move(plan)));
  staged.trial.stack = stack;
  CANRUN_RETURN_IF_ERROR(trial::require_local_files(staged.trial.checkpoint));
  CANRUN_ASSIGN_OR_RETURN(staged.device.reference,
                          trial::reference_for(staged.trial, 0, {}, launcher));
  return staged;
}

Result<Staged> device_stage(Staged staged, const backend::BackendProfile& profile,
                            const CoreGrant& grant, process::ProcessLauncher& launcher) {
  trial::Placement placement;
  placement.cores = {grant.range().first, grant.count()};
  placement.pinning = profile.pinning_syntax == "count"
                          ? std::optional<std::string>(std::to_string(grant.count()))
                          : grant_pinning_value(profile, grant);
  CANRUN_ASSIGN_OR_RETURN(staged.device, trial::run_on_device(staged.trial, placement, launcher,
                                                              std::move(staged.device.reference)));
  return staged;
}

Result<Staged> verify_stage(Staged staged, process::ProcessLauncher& launcher) {
  CANRUN_ASSIGN_OR_RETURN(trial::TrialOutcome verified,
                          trial::verify_on_host(staged.trial, std::move(staged.device), launcher));
  staged.device = trial::DeviceRun{std::move(verified), std::nullopt, {}, std::nullopt};
  return staged;
}

Status run_staged_trials(const SliceRun& run, Scheduler& scheduler, FetchAhead* fetching,
                         const std::vector<Job>& to_fetch, CampaignOutcome& outcome) {
  // Each item's device job, sized once (first_jobs sized those it fetches; the others on first
  // need): its reference and verify jobs are sized from it.
  std::map<std::size_t, Job> device_jobs;
  for (const Job& job : to_fetch) device_jobs.emplace(stage_of(job.id).index, job);
  const auto device_job = [&](std::size_t index) -> const Job& {
    auto [found, inserted] = device_jobs.try_emplace(index);
    if (inserted) found->second = job_of(index, outcome.items[index], run.profile, run.history);
    return found->second;
  };
  struct Finished {
    std::size_t index;
    std::string job_id;
    //! After the reference stage: the prepared trial and its reference; after the device
    //! stage, device.report set: the host stage is still to come.
    Result<Staged> staged;
  };
  std::map<std::size_t, Staged> referenced;  // between the reference and device stages
  std::map<std::size_t, Staged> verifying;   // between the device and host stages
  std::mutex mutex;                          // guards `finished`
  std::vector<Finished> finished;
  std::condition_variable wake;
  std::vector<std::thread> threads;
  Status failure;
  const auto deliver = [&](std::size_t index, std::string job_id, Result<Staged> staged) {
    std::lock_guard guard(mutex);
    finished.push_back({index, std::move(job_id), std::move(staged)});
    wake.notify_all();
  };
  const std::atomic<bool>& stop = run.stop;
  while ((!scheduler.idle() || (fetching && fetching->waiting() > 0)) && !stop && failure.ok()) {
    if (fetching) {
      for (const auto& [index, fetched] : fetching->ready()) {
        const WorkItem& item = outcome.items[index];
        if (fetched.ok()) {
          // A refusal ends the loop as any failure does: the stages running are stopped and
          // joined below, never left running past this function.
          if (auto added = scheduler.add(reference_job_of(index, item, device_job(index)));
              !added.ok()) {
            failure = added;
            break;
          }
          continue;
        }
        fetching->done(index);
        outcome.problems.push_back(
            fmt::format("{} ({}): {}", item.model_id.str(), item.task, fetched.error().message()));
        run.observer.failed(item, fetched.error());
      }
      if (!failure.ok()) break;
    }
    const double now_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - run.started).count();
    for (JobStart& start : scheduler.start_ready(now_s)) {
      const StageJob job = stage_of(start.id);
      const std::size_t index = job.index;
      if (job.stage == TrialStage::kReference) {
        (void)run.dir.journal(run.slice, {{"event", "reference"}, {"item", index}});
        threads.emplace_back([&, index, id = start.id] {
          deliver(index, id,
                  reference_stage(outcome.items[index], run.request, run.profile, run.stack,
                                  run.launcher));
        });
        continue;
      }
      if (job.stage == TrialStage::kVerify) {
        auto node = verifying.extract(index);
        const WorkItem& item = outcome.items[index];
        run.observer.verifying(item, item.cores <= 1                 ? "CPU reference"
                                     : run.request.agreement_decides ? "CPU reference, agreement"
                                                                     : "CPU reference, judge");
        threads.emplace_back(
            [&, index, id = start.id, staged = std::move(node.mapped())]() mutable {
              deliver(index, id, verify_stage(std::move(staged), run.launcher));
            });
        continue;
      }
      const WorkItem& item = outcome.items[index];
      (void)run.dir.journal(
          run.slice, {{"event", "start"}, {"item", index}, {"cores", describe_grant(start.cores)}});
      run.observer.started(item, describe_grant(start.cores));
      auto node = referenced.extract(index);
      threads.emplace_back([&, index, id = start.id, grant = std::move(start.cores),
                            staged = std::move(node.mapped())]() mutable {
        deliver(index, id, device_stage(std::move(staged), run.profile, grant, run.launcher));
      });
    }
    std::vector<Finished> done;
    {
      std::unique_lock guard(mutex);
      wake.wait_for(guard, std::chrono::seconds(1), [&] { return !finished.empty() || stop; });
      done.swap(finished);
    }
    for (Finished& one : done) {
      (void)scheduler.finish(one.job_id);
      const WorkItem& item = outcome.items[one.index];
      if (stop) break;  // a trial cut short by the stop is no verdict
      const TrialStage stage = stage_of(one.job_id).stage;
      if (one.staged.ok() && stage == TrialStage::kReference) {  // on to its device stage
        if (auto added = scheduler.add(device_job(one.index)); !added.ok()) {
          failure = added;
          break;
        }
        referenced.emplace(one.index, std::move(*one.staged));
        continue;
      }
      if (one.staged.ok() && one.staged->device.report) {  // on to its host stage
        Job verify = verify_job_of(one.index, device_job(one.index));
        if (auto added = scheduler.add(verify); !added.ok()) {
          failure = added;
          break;
        }
        verifying.emplace(one.index, std::move(*one.staged));
        (void)run.dir.journal(run.slice, {{"event", "verify"}, {"item", one.index}});
        continue;
      }
      if (fetching) fetching->done(one.index);
      if (!one.staged.ok()) {
        outcome.problems.push_back(fmt::format("{} ({}): {}", item.model_id.str(), item.task,
                                               one.staged.error().message()));
        run.observer.failed(item, one.staged.error());
        continue;
      }
      trial::TrialOutcome& ran = one.staged->device.outcome;
      dataset::VerdictRow& row = ran.row;
      // A verdict run again (--retry) says whether it held: a changed one is flaky.
      if (const auto before = run.recorded.find(one.index); before != run.recorded.end()) {
        row.flaky = before->second.result != row.result;
      }
      const RunTraces traces{run::run_log(ran.run_dir), ran.compile_cache, ran.images};
      if (auto status = run.recorder.record(one.index, row, traces); !status.ok()) {
        failure = status;
        break;
      }
      outcome.results[one.index] = std::move(row);
      run.observer.finished(item, outcome.results[one.index]);
    }
    run.observer.tick();
  }
  if (stop || !failure.ok()) {
    outcome.interrupted = stop;
    run.launcher.kill_all();
  }
  for (std::thread& thread : threads) thread.join();
  return failure;
}

}  // namespace canrun::campaign
