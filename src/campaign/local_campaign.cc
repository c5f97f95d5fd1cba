#include "campaign/local_campaign.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include "campaign/campaign_dir.h"
#include "campaign/disk_budget.h"
#include "campaign/expected_time.h"
#include "campaign/fetch.h"
#include "campaign/host_budget.h"
#include "campaign/scheduler.h"
#include "core/atomic_file.h"
#include "core/log.h"
#include "core/version.h"
#include "dataset/dataset.h"
#include "hub/checkpoint_files.h"
#include "hub/hf_cache.h"
#include "hub/hub_client.h"
#include "run/script_run.h"
#include "stack/stack.h"

namespace canrun::campaign {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr int kLocalSlice = 0;  //!< a local campaign is a fleet campaign of one slice
constexpr const char* kCampaignVariable = "CANRUN_CAMPAIGN";

//! A launcher that journals every process group it starts and can kill those still running.
class TrackingLauncher final : public process::ProcessLauncher {
 public:
  TrackingLauncher(process::ProcessLauncher& inner, const CampaignDir& dir, int slice)
      : inner_(inner), dir_(dir), slice_(slice) {}

  Result<process::ProcessOutcome> run(const process::ProcessSpec& spec) override {
    process::ProcessSpec tracked = spec;
    int group = 0;
    tracked.on_start = [&](int pgid) {
      group = pgid;
      {
        std::lock_guard lock(mutex_);
        if (killing_) ::kill(-pgid, SIGKILL);
        live_.insert(pgid);
      }
      (void)dir_.journal(slice_, {{"event", "process"}, {"pgid", pgid}});
      if (spec.on_start) spec.on_start(pgid);
    };
    auto outcome = inner_.run(tracked);
    std::lock_guard lock(mutex_);
    live_.erase(group);
    return outcome;
  }

  //! Kills every running group, and every one started from now on.
  void kill_all() {
    std::lock_guard lock(mutex_);
    killing_ = true;
    for (int pgid : live_) ::kill(-pgid, SIGKILL);
  }

 private:
  process::ProcessLauncher& inner_;
  const CampaignDir& dir_;
  const int slice_;
  std::mutex mutex_;
  std::set<int> live_;
  bool killing_ = false;
};

}  // namespace

nlohmann::json settings_json(const CampaignOptions& options, const stack::Stack& stack) {
  const auto& trial = options.trial;
  return {{"canrun_version", kCanrunVersion},
          {"backend", trial.backend},
          {"tasks", options.selection.tasks},
          {"out", fs::absolute(options.out).string()},
          {"top", options.selection.top},
          {"tokens", trial.new_tokens},
          {"timeout_s", trial.timeout.count()},
          {"memory_per_core_gib", trial.memory_per_core_gib},
          {"reserve_gib", trial.reserve_gib},
          {"judge_model", trial.judge_model},
          {"max_cores", options.max_cores},
          {"disk_budget_bytes", options.disk_budget_bytes},
          {"compiler_version", stack.compiler_version},
          {"library_version", stack.library_version}};
}

namespace {

//! The host share a trial's device stage holds: on a `count` profile its cores are the CPUs
//! (the scheduler counts them), elsewhere the compiler runs on the host beside it; memory for
//! loading the weights and the process. Its CPU reference (reference_job_of, before it) and its
//! verification (verify_job_of, after it) are host work of their own.
Job job_of(std::size_t index, const WorkItem& item, const backend::BackendProfile& profile,
           const RuntimeHistory& history) {
  Job job;
  job.id = std::to_string(index);
  job.cores = item.cores;
  job.host_cpus = profile.pinning_syntax == "count" ? 0 : 2;
  job.host_memory_gib = 1.0 + 2.0 * static_cast<double>(item.weights_bytes) / (1ull << 30);
  job.expected_s = expected_seconds(
      TestSize{item.model_id, profile.name, item.weights_bytes, item.cores}, &history);
  return job;
}

//! The row of an item excluded before running: the stack's columns, the reason and why.
Result<dataset::VerdictRow> excluded_row(const WorkItem& item, const CampaignOptions& options,
                                         const backend::BackendProfile& profile,
                                         const stack::Stack& stack,
                                         process::ProcessLauncher& launcher) {
  trial::PreparedTrial trial;
  trial.request = options.trial;
  trial.request.task = item.task;
  trial.profile = profile;
  trial.cache_dir = trial::absolute_cache_dir(options.trial);
  trial.python = stack.python;
  trial.checkpoint.model_id = item.model_id;
  if (!item.revision.empty()) {
    trial.checkpoint.revision = item.revision;
    trial.checkpoint.commit = item.revision;
  }
  trial.stack = stack;
  trial.plan.exclusion = item.exclusion_reason;
  trial.plan.why = item.why;
  if (item.weights_bytes > 0) {
    trial.plan.stack_plan.emplace();
    trial.plan.stack_plan->shards.weights_bytes = item.weights_bytes;
  }
  CANRUN_ASSIGN_OR_RETURN(trial::TrialOutcome outcome,
                          trial::run_prepared_trial(trial, {}, launcher));
  return outcome.row;
}

//! A trial between its stages: prepared, with its CPU reference once the reference stage ran,
//! and (once its device stage ran) how that went.
struct Staged {
  trial::PreparedTrial trial;
  trial::DeviceRun device;
};

//! One planned trial's reference stage, on the host: prepared (its plan as planned), and its
//! CPU reference found or computed, so that its run.py is given the reference's tokens.
Result<Staged> reference_stage(const WorkItem& item, const CampaignOptions& options,
                               const backend::BackendProfile& profile, const stack::Stack& stack,
                               process::ProcessLauncher& launcher) {
  trial::TrialRequest request = options.trial;
  request.model = item.model_id;
  request.revision = item.revision.empty() ? "main" : item.revision;
  request.task = item.task;
  CANRUN_ASSIGN_OR_RETURN(trial::Checkpoint checkpoint,
                          trial::resolve_checkpoint({request.model, request.revision, {}}));
  trial::TrialPlan plan;
  plan.cores = item.cores;
  plan.parallelism = item.parallelism;
  plan.stack_plan.emplace();
  plan.stack_plan->shards.weights_bytes = item.weights_bytes;
  Staged staged;
  CANRUN_ASSIGN_OR_RETURN(staged.trial,
                          trial::prepare_planned(request, profile, std::move(checkpoint),
                                                 stack.library_version, std::move(plan)));
  staged.trial.stack = stack;
  CANRUN_RETURN_IF_ERROR(trial::require_local_files(staged.trial.checkpoint));
  CANRUN_ASSIGN_OR_RETURN(staged.device.reference,
                          trial::reference_for(staged.trial, 0, {}, launcher));
  return staged;
}

//! One trial's device stage, on its cores, after its reference stage.
Result<Staged> run_on_device(Staged staged, const backend::BackendProfile& profile,
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

//! The host work before a trial's device stage: its CPU reference (found in the store, or
//! computed eagerly on one host CPU), memory for the reference's float32 weights; about half
//! the device's time when it is computed.
Job reference_job_of(std::size_t index, const WorkItem& item, const Job& device_job) {
  Job job;
  job.id = "reference:" + std::to_string(index);
  job.cores = 0;
  job.host_cpus = 1;
  job.host_memory_gib = 1.0 + 3.0 * static_cast<double>(item.weights_bytes) / (1ull << 30);
  job.expected_s = device_job.expected_s / 2;
  return job;
}

//! The host work that decides a verdict after its device stage: the comparison with the
//! reference, or (sharded) the judge model; one host CPU, memory for the judge.
Job verify_job_of(std::size_t index, const Job& device_job) {
  Job job;
  job.id = "verify:" + std::to_string(index);
  job.cores = 0;
  job.host_cpus = 1;
  job.host_memory_gib = 2.0;
  job.expected_s = device_job.expected_s / 10;
  return job;
}

//! The cores of this machine for the profile, within --cores. On `count` (the cpu backend, whose
//! cores are worker processes) they are the host's CPUs, or exactly --cores when given: more
//! workers than CPUs then share them, as `canrun test --cores N` does.
Result<CoreAllocator> machine_cores(const backend::BackendProfile& profile, int max_cores,
                                    const HostResources& host) {
  backend::BackendProfile limited = profile;
  int host_cpus = static_cast<int>(host.cpus);
  if (max_cores > 0) {
    if (profile.pinning_syntax == "count") {
      if (max_cores > host_cpus) {
        log::info("{} worker processes share the host's {} CPUs (--cores {})", max_cores, host_cpus,
                  max_cores);
      }
      host_cpus = max_cores;
    } else {
      host_cpus = std::min(host_cpus, max_cores);
      const int per_device = std::max(1, limited.topology.cores_per_device);
      limited.topology.devices = std::min(limited.topology.devices,
                                          std::max(1, (max_cores + per_device - 1) / per_device));
    }
  }
  return CoreAllocator::for_profile(limited, host_cpus);
}

//! Whether the HF cache holds the item's checkpoint at its planned commit: its config
//! (config.json, or a pipeline's model_index.json) and every safetensors header the hub reader
//! needs (each shard an index names, each pipeline component's weights), not just what planning
//! fetched.
bool in_hf_cache(const WorkItem& item, const hub::HfCache& cache) {
  auto id = ModelId::parse(item.model_id);
  auto revision = Revision::parse(item.revision.empty() ? "main" : item.revision);
  if (!id.ok() || !revision.ok()) return false;
  const auto snapshot = cache.snapshot_dir(*id, *revision);
  if (!snapshot) return false;
  hub::LocalCheckpointFiles files(*snapshot, snapshot->string());
  const std::vector<std::string> listed = files.list();
  const auto has = [&](std::string_view name) {
    return std::find(listed.begin(), listed.end(), name) != listed.end();
  };
  if (!has("config.json") && !has(hub::kPipelineIndexFile)) return false;
  return hub::read_checkpoint_headers(files, listed).ok();
}

//! Checkpoints a campaign fetches ahead of their runs, in the order the scheduler prefers.
class Fetching {
 public:
  static Result<std::unique_ptr<Fetching>> open(const CampaignDir& dir, int slice,
                                                std::uint64_t budget) {
    auto fetching = std::unique_ptr<Fetching>(new Fetching());
    const hub::HfCache cache = hub::HfCache::from_environment();
    DiskBudget::Options options;
    options.budget_bytes = budget > 0 ? budget : (std::uint64_t{1} << 62);
    options.ledger = dir.slice_dir(slice) / "fetched-blobs";  // each node has its own HF cache
    CANRUN_ASSIGN_OR_RETURN(fetching->budget_, DiskBudget::open(cache, options));
    CANRUN_ASSIGN_OR_RETURN(hub::HubConfig config, hub::HubConfig::from_environment());
    fetching->prefetcher_ = std::make_unique<CheckpointPrefetcher>(
        std::make_unique<hub::HubClient>(
            std::move(config), hub::make_curl_transport(hub::default_transport_options())),
        cache, *fetching->budget_);
    return fetching;
  }
  ~Fetching() { prefetcher_.reset(); }  // stops its thread before the budget goes

  void enqueue(std::size_t index, const WorkItem& item) {
    waiting_.push_back(index);
    handles_[index] =
        prefetcher_->enqueue(*ModelId::parse(item.model_id),
                             *Revision::parse(item.revision.empty() ? "main" : item.revision));
  }
  //! Items whose fetch ended since the last call, with its outcome (never blocks).
  std::vector<std::pair<std::size_t, Status>> ready() {
    std::vector<std::pair<std::size_t, Status>> out;
    for (auto it = waiting_.begin(); it != waiting_.end();) {
      auto outcome = prefetcher_->poll(handles_.at(*it));
      if (!outcome) {
        ++it;
        continue;
      }
      out.emplace_back(*it, outcome->ok() ? ok_status() : Status(outcome->error()));
      it = waiting_.erase(it);
    }
    return out;
  }
  //! The item's test is over (or will not run): its room may be reused.
  void done(std::size_t index) {
    if (const auto found = handles_.find(index); found != handles_.end()) {
      prefetcher_->done(found->second);
      handles_.erase(found);
    }
  }
  std::size_t waiting() const { return waiting_.size(); }
  std::uint64_t peak_bytes() const { return budget_->peak_bytes_held(); }

 private:
  Fetching() = default;
  std::unique_ptr<DiskBudget> budget_;
  std::unique_ptr<CheckpointPrefetcher> prefetcher_;
  std::map<std::size_t, FetchHandle> handles_;
  std::vector<std::size_t> waiting_;
};

bool needs_retry(const dataset::VerdictRow& row, std::string_view retry) {
  if (row.result == VerdictResult::kExcluded) return false;
  if (retry == "all") return true;
  return retry == "failed" && row.result != VerdictResult::kPass;
}

}  // namespace

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

int end_leftover_processes(const fs::path& dir, int slice) {
  const std::string mark = std::string(kCampaignVariable) + "=" + fs::absolute(dir).string();
  std::set<int> groups;
  for (const auto& event : CampaignDir(dir).read_journal(slice)) {
    if (event.value("event", "") == "process" && event.value("pgid", 0) > 1)
      groups.insert(event["pgid"].get<int>());
  }
  if (groups.empty()) return 0;
  int killed = 0;
  std::error_code error;
  for (fs::directory_iterator it("/proc", error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    const int pid = std::stoi(name);
    if (pid == ::getpid() || !groups.contains(::getpgid(pid))) continue;
    std::ifstream environ(it->path() / "environ", std::ios::binary);
    std::string variables((std::istreambuf_iterator<char>(environ)), {});
    if (variables.find(mark + '\0') == std::string::npos && !variables.ends_with(mark)) {
      continue;  // a process that reuses the number, not one of ours
    }
    if (::kill(pid, SIGKILL) == 0) ++killed;
  }
  return killed;
}

namespace {

//! Which part of a campaign this canrun runs: the whole of a local one (planned here, or
//! resumed), or one slice of a fleet campaign planned before (a worker).
struct SliceRole {
  int slice = kLocalSlice;
  bool worker = false;  //!< results to the folder only: the collect step fills the dataset
};

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
  ::setenv(kCampaignVariable, dir.root().c_str(), 1);
  if (const int killed = end_leftover_processes(dir.root(), slice); killed > 0) {
    log::warning("ended {} process(es) left by an earlier canrun of this campaign", killed);
  }
  TrackingLauncher tracking(launcher, dir, slice);

  CANRUN_ASSIGN_OR_RETURN(backend::BackendProfile profile, trial::trial_profile(options.trial));
  const stack::StackPython python(options.trial.python,
                                  trial::absolute_cache_dir(options.trial) / "stack", tracking);
  CANRUN_ASSIGN_OR_RETURN(stack::Stack stack, stack::probe_stack(python, profile));
  const dataset::DatasetDir dataset(options.out);
  CANRUN_ASSIGN_OR_RETURN(HostResources host, host_resources());
  CANRUN_ASSIGN_OR_RETURN(CoreAllocator cores, machine_cores(profile, options.max_cores, host));

  CampaignOutcome outcome;
  std::map<std::size_t, dataset::VerdictRow> recorded;  // done before this run
  std::vector<std::size_t> indices;                     // the items of this slice
  if (role.worker) {
    CANRUN_ASSIGN_OR_RETURN(nlohmann::json settings, dir.read_settings());
    if (settings.value("compiler_version", "") != stack.compiler_version ||
        settings.value("library_version", "") != stack.library_version) {
      return Error(
          ErrorCode::kFailedCheck,
          fmt::format(
              "campaign {} was planned for {} {} and transformers {}; this node's stack has {} and "
              "transformers {}: its verdicts would belong to another stack",
              dir.root().string(), profile.compiler, settings.value("compiler_version", "?"),
              settings.value("library_version", "?"), stack.compiler_version,
              stack.library_version));
    }
    CANRUN_ASSIGN_OR_RETURN(outcome.items, dir.read_work());
    CANRUN_ASSIGN_OR_RETURN(auto slices, dir.read_slices(outcome.items.size()));
    if (slice < 0 || static_cast<std::size_t>(slice) >= slices.size()) {
      return invalid_argument(fmt::format("--index {}: campaign {} has slices 0 to {}", slice,
                                          dir.root().string(), slices.size() - 1));
    }
    indices = std::move(slices[static_cast<std::size_t>(slice)]);
    CANRUN_ASSIGN_OR_RETURN(recorded, dir.read_results(slice, &outcome.problems));
  } else if (options.resume && dir.planned()) {
    CANRUN_ASSIGN_OR_RETURN(nlohmann::json settings, dir.read_settings());
    if (settings.value("backend", "") != options.trial.backend) {
      return invalid_argument(fmt::format(
          "campaign folder {} holds a campaign on backend {}, not {}; give its backend or "
          "another --campaign-dir",
          dir.root().string(), settings.value("backend", "?"), options.trial.backend));
    }
    CANRUN_ASSIGN_OR_RETURN(outcome.items, dir.read_work());
    CANRUN_ASSIGN_OR_RETURN(recorded, dir.read_results(slice, &outcome.problems));
  } else {
    CANRUN_ASSIGN_OR_RETURN(PlannedWork work,
                            plan_work(options.selection, options.trial, stack.library_version,
                                      cores.capacity(), tracking));
    outcome.items = std::move(work.items);
    outcome.unresolved = std::move(work.unresolved);
    fs::remove_all(dir.slice_dir(slice), error);
    CANRUN_RETURN_IF_ERROR(dir.write_plan(settings_json(options, stack), outcome.items));
    // A new campaign on a stack already in the dataset re-tests only what changed: a row of
    // the same model and task at the same revision stands, and so does the same exclusion for
    // the same reason, in the same words.
    CANRUN_ASSIGN_OR_RETURN(
        dataset::StackKey key,
        dataset::StackKey::make(profile.name, profile.compiler, stack.compiler_version,
                                "transformers", stack.library_version));
    if (auto rows = dataset.read_stack(key); rows.ok()) {
      for (std::size_t index = 0; index < outcome.items.size(); ++index) {
        const WorkItem& item = outcome.items[index];
        for (const dataset::VerdictRow& row : *rows) {
          if (row.model_id != item.model_id || row.task != item.task) continue;
          const bool same_run = !item.excluded() && !item.revision.empty() &&
                                row.revision.value_or("") == item.revision;
          const bool same_exclusion = item.excluded() && row.result == VerdictResult::kExcluded &&
                                      row.exclusion_reason == item.exclusion_reason &&
                                      row.error == item.why;
          if (same_run || same_exclusion) {
            recorded.emplace(index, row);
            CANRUN_RETURN_IF_ERROR(dir.write_result(slice, index, row));
          }
        }
      }
    }
  }

  // What runs now: excluded items get their row at once; done items stand unless retried.
  RuntimeHistory history;
  std::vector<std::size_t> to_run;
  std::vector<std::size_t> to_exclude;
  if (!role.worker) {
    indices.resize(outcome.items.size());
    for (std::size_t index = 0; index < indices.size(); ++index) indices[index] = index;
  }
  for (const std::size_t index : indices) {
    const auto done = recorded.find(index);
    if (done != recorded.end()) {
      history.record(done->second.model_id, done->second.backend, done->second.started_at,
                     done->second.runtime_s.value_or(0));
      if (!needs_retry(done->second, options.retry)) {
        outcome.results.emplace(index, done->second);
        continue;
      }
    }
    (outcome.items[index].excluded() ? to_exclude : to_run).push_back(index);
  }
  outcome.indices = indices;
  observer.planned(outcome.items, to_run.size() + to_exclude.size());

  std::mutex mutex;  // guards `finished`, dataset writes and the outcome
  const auto record = [&](std::size_t index, dataset::VerdictRow row, std::string_view log = {},
                          std::optional<run::CompileCacheCounts> cache = std::nullopt,
                          const std::map<std::string, fs::path>& images = {}) -> Status {
    CANRUN_RETURN_IF_ERROR(dir.write_result(slice, index, row, log, images));
    if (!role.worker) {
      CANRUN_RETURN_IF_ERROR(dataset.upsert({row}));
      CANRUN_RETURN_IF_ERROR(dataset.record_log(row, log));
      CANRUN_RETURN_IF_ERROR(dataset.record_images(row, images));
    }
    nlohmann::json done = {
        {"event", "done"}, {"item", index}, {"result", std::string(to_string(row.result))}};
    if (cache) done["compile_cache"] = {{"hits", cache->hits}, {"misses", cache->misses}};
    (void)dir.journal(slice, std::move(done));
    outcome.results[index] = std::move(row);
    return ok_status();
  };
  for (std::size_t index : to_exclude) {
    if (stop) break;
    CANRUN_ASSIGN_OR_RETURN(dataset::VerdictRow row,
                            excluded_row(outcome.items[index], options, profile, stack, tracking));
    CANRUN_RETURN_IF_ERROR(record(index, row));
    observer.finished(outcome.items[index], outcome.results[index]);
  }

  // Workers asked for beyond the host's CPUs (--cores on `count`) share them: the budget counts
  // them as CPUs, as it counts every worker.
  if (cores.syntax() == "count")
    host.cpus = std::max(host.cpus, static_cast<double>(cores.capacity()));
  CANRUN_ASSIGN_OR_RETURN(HostBudget budget, HostBudget::create(host));
  Scheduler scheduler(std::move(cores), std::move(budget));
  // Checkpoints on this machine are scheduled at once; the others once fetched, in the order
  // the scheduler prefers (longest expected first).
  const hub::HfCache hf_cache = hub::HfCache::from_environment();
  std::vector<Job> to_fetch;
  for (std::size_t index : to_run) {
    Job job = job_of(index, outcome.items[index], profile, history);
    if (in_hf_cache(outcome.items[index], hf_cache) || outcome.items[index].revision.empty()) {
      CANRUN_RETURN_IF_ERROR(scheduler.add(reference_job_of(index, outcome.items[index], job)));
    } else {
      to_fetch.push_back(std::move(job));
    }
  }
  std::unique_ptr<Fetching> fetching;
  if (!to_fetch.empty()) {
    CANRUN_ASSIGN_OR_RETURN(fetching, Fetching::open(dir, slice, options.disk_budget_bytes));
    std::stable_sort(to_fetch.begin(), to_fetch.end(),
                     [](const Job& a, const Job& b) { return a.expected_s > b.expected_s; });
    for (const Job& job : to_fetch) {
      const std::size_t index = std::stoul(job.id);
      fetching->enqueue(index, outcome.items[index]);
      (void)dir.journal(slice, {{"event", "fetch"}, {"item", index}});
    }
  }
  const auto job_by_id = [&](std::size_t index) {
    for (const Job& job : to_fetch) {
      if (job.id == std::to_string(index)) return job;
    }
    return Job{};
  };
  // A trial runs in three stages (trial.h), each a job of its own: its CPU reference as host
  // work ("reference:<index>", no cores), then on its cores ("<index>", ready once its reference
  // is done or failed: run.py is given the reference's tokens), then, when the run generated,
  // as host work again ("verify:<index>") that decides the verdict. The cores are held only for
  // the run.
  struct Finished {
    std::size_t index;
    std::string job_id;
    //! After the reference stage: the prepared trial and its reference; after the device
    //! stage, device.report set: the host stage is still to come.
    Result<Staged> staged;
  };
  constexpr std::string_view kReference = "reference:";
  constexpr std::string_view kVerify = "verify:";
  std::map<std::size_t, Staged> referenced;  // between the reference and device stages
  std::map<std::size_t, Staged> verifying;   // between the device and host stages
  std::vector<Finished> finished;
  std::condition_variable wake;
  std::vector<std::thread> threads;
  std::size_t running = 0;
  Status failure;
  const auto deliver = [&](std::size_t index, std::string job_id, Result<Staged> staged) {
    std::lock_guard guard(mutex);
    finished.push_back({index, std::move(job_id), std::move(staged)});
    wake.notify_all();
  };
  while ((!scheduler.idle() || (fetching && fetching->waiting() > 0)) && !stop && failure.ok()) {
    if (fetching) {
      for (const auto& [index, fetched] : fetching->ready()) {
        const WorkItem& item = outcome.items[index];
        if (fetched.ok()) {
          CANRUN_RETURN_IF_ERROR(scheduler.add(reference_job_of(index, item, job_by_id(index))));
          continue;
        }
        fetching->done(index);
        outcome.problems.push_back(
            fmt::format("{} ({}): {}", item.model_id, item.task, fetched.error().message()));
        observer.failed(item, fetched.error());
      }
    }
    const double now_s = std::chrono::duration<double>(Clock::now() - started).count();
    for (JobStart& start : scheduler.start_ready(now_s)) {
      ++running;
      if (start.id.starts_with(kReference)) {
        const std::size_t index = std::stoul(start.id.substr(kReference.size()));
        (void)dir.journal(slice, {{"event", "reference"}, {"item", index}});
        threads.emplace_back([&, index, id = start.id] {
          deliver(index, id,
                  reference_stage(outcome.items[index], options, profile, stack, tracking));
        });
        continue;
      }
      if (start.id.starts_with(kVerify)) {
        const std::size_t index = std::stoul(start.id.substr(kVerify.size()));
        auto node = verifying.extract(index);
        observer.verifying(outcome.items[index]);
        threads.emplace_back([&, index, id = start.id,
                              staged = std::move(node.mapped())]() mutable {
          auto verified = trial::verify_on_host(staged.trial, std::move(staged.device), tracking);
          if (!verified.ok()) return deliver(index, id, verified.error());
          staged.device = trial::DeviceRun{std::move(*verified), std::nullopt, {}, std::nullopt};
          deliver(index, id, std::move(staged));
        });
        continue;
      }
      const std::size_t index = std::stoul(start.id);
      const WorkItem& item = outcome.items[index];
      (void)dir.journal(
          slice, {{"event", "start"}, {"item", index}, {"cores", describe_grant(start.cores)}});
      observer.started(item, describe_grant(start.cores));
      auto node = referenced.extract(index);
      threads.emplace_back([&, index, id = start.id, grant = std::move(start.cores),
                            staged = std::move(node.mapped())]() mutable {
        deliver(index, id, run_on_device(std::move(staged), profile, grant, tracking));
      });
    }
    std::vector<Finished> done;
    {
      std::unique_lock guard(mutex);
      wake.wait_for(guard, std::chrono::seconds(1), [&] { return !finished.empty() || stop; });
      done.swap(finished);
    }
    for (Finished& one : done) {
      --running;
      (void)scheduler.finish(one.job_id);
      const WorkItem& item = outcome.items[one.index];
      if (stop) break;  // a trial cut short by the stop is no verdict
      if (one.staged.ok() && one.job_id.starts_with(kReference)) {  // on to its device stage
        if (auto added = scheduler.add(job_of(one.index, item, profile, history)); !added.ok()) {
          failure = added;
          break;
        }
        referenced.emplace(one.index, std::move(*one.staged));
        continue;
      }
      if (one.staged.ok() && one.staged->device.report) {  // on to its host stage
        Job verify = verify_job_of(one.index, job_of(one.index, item, profile, history));
        if (auto added = scheduler.add(verify); !added.ok()) {
          failure = added;
          break;
        }
        verifying.emplace(one.index, std::move(*one.staged));
        (void)dir.journal(slice, {{"event", "verify"}, {"item", one.index}});
        continue;
      }
      if (fetching) fetching->done(one.index);
      if (!one.staged.ok()) {
        outcome.problems.push_back(
            fmt::format("{} ({}): {}", item.model_id, item.task, one.staged.error().message()));
        observer.failed(item, one.staged.error());
        continue;
      }
      dataset::VerdictRow& row = one.staged->device.outcome.row;
      const std::string log = run::run_log(one.staged->device.outcome.run_dir);
      // A verdict run again (--retry) says whether it held: a changed one is flaky.
      if (const auto before = recorded.find(one.index); before != recorded.end()) {
        row.flaky = before->second.result != row.result;
      }
      std::lock_guard guard(mutex);
      if (auto status =
              record(one.index, std::move(row), log, one.staged->device.outcome.compile_cache,
                     one.staged->device.outcome.images);
          !status.ok()) {
        failure = status;
        break;
      }
      observer.finished(item, outcome.results[one.index]);
    }
    observer.tick();
  }
  if (stop || !failure.ok()) {
    outcome.interrupted = stop;
    tracking.kill_all();
  }
  for (std::thread& thread : threads) thread.join();
  if (fetching) outcome.peak_fetched_bytes = fetching->peak_bytes();
  CANRUN_RETURN_IF_ERROR(failure);
  if (!outcome.interrupted && !role.worker) {
    // A canrun killed between a result file and the dataset write left the dataset behind the
    // folder: the folder's results are the truth, and writing them again changes nothing else.
    std::vector<dataset::VerdictRow> rows;
    for (const auto& [index, row] : outcome.results) rows.push_back(row);
    CANRUN_RETURN_IF_ERROR(dataset.upsert(std::move(rows)));
    // Likewise the logs (a verdict that stood from an earlier campaign keeps the log it has).
    for (const auto& [index, row] : outcome.results) {
      if (const std::string log = dir.read_log(slice, index); !log.empty()) {
        CANRUN_RETURN_IF_ERROR(dataset.record_log(row, log));
      }
      if (const auto images = dir.read_images(slice, index); !images.empty()) {
        CANRUN_RETURN_IF_ERROR(dataset.record_images(row, images));
      }
    }
  }
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
