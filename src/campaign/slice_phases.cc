#include "campaign/slice_phases.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <system_error>
#include <utility>

#include "campaign/job_sizing.h"
#include "campaign/plan_work.h"
#include "dataset/stack_key.h"

namespace canrun::campaign {

namespace fs = std::filesystem;

namespace {

//! The compile cache counts journalled for the runs behind the verdicts of a slice of `dir`
//! (its "done" events, and the "stood" ones that carried them over), by the item's key and
//! revision; empty when the folder holds no campaign.
std::map<std::string, nlohmann::json> journalled_counts(const CampaignDir& dir, int slice) {
  std::map<std::string, nlohmann::json> counts;
  if (!dir.planned()) return counts;
  auto items = dir.read_work();
  if (!items.ok()) return counts;
  for (const nlohmann::json& event : dir.read_journal(slice)) {
    const std::string kind = event.value("event", "");
    const auto cache = event.find("compile_cache");
    const std::size_t index = event.value("item", items->size());
    if ((kind != "done" && kind != "stood") || index >= items->size()) continue;
    const WorkItem& item = (*items)[index];
    if (cache == event.end() || !cache->is_object()) {
      counts.erase(item.key() + "@" + item.revision);  // its last run had no counts
    } else {
      counts[item.key() + "@" + item.revision] = *cache;
    }
  }
  return counts;
}

}  // namespace

Result<SliceWork> new_work(const CampaignOptions& options, const CampaignDir& dir, int slice,
                           const backend::BackendProfile& profile, const stack::Stack& stack,
                           int machine_cores, const dataset::DatasetDir& dataset,
                           process::ProcessLauncher& launcher) {
  CANRUN_ASSIGN_OR_RETURN(
      PlannedWork planned,
      plan_work(options.selection, options.trial, stack.library_version, machine_cores, launcher));
  SliceWork work;
  work.items = std::move(planned.items);
  work.unresolved = std::move(planned.unresolved);
  // A verdict that stands keeps the compile cache counts of its run, when an earlier campaign
  // in this folder journalled them (the hit rate of `campaign status`, `cache stats --campaign`).
  const std::map<std::string, nlohmann::json> counts = journalled_counts(dir, slice);
  std::error_code error;
  fs::remove_all(dir.slice_dir(slice), error);
  CANRUN_RETURN_IF_ERROR(dir.write_plan(settings_json(options, stack), work.items));
  // A new campaign on a stack already in the dataset re-tests only what changed.
  CANRUN_ASSIGN_OR_RETURN(
      dataset::StackKey key,
      dataset::StackKey::make(profile.name, profile.compiler, stack.compiler_version,
                              "transformers", stack.library_version));
  if (auto rows = dataset.read_stack(key); rows.ok()) {
    work.recorded = standing_rows(work.items, *rows);
    for (const auto& [index, row] : work.recorded) {
      CANRUN_RETURN_IF_ERROR(dir.write_result(slice, index, row));
      const WorkItem& item = work.items[index];
      if (const auto found = counts.find(item.key() + "@" + item.revision); found != counts.end()) {
        (void)dir.journal(slice,
                          {{"event", "stood"}, {"item", index}, {"compile_cache", found->second}});
      }
    }
  }
  work.indices.resize(work.items.size());
  for (std::size_t index = 0; index < work.indices.size(); ++index) work.indices[index] = index;
  return work;
}

Result<SliceWork> resumed_work(const CampaignDir& dir, int slice, std::string_view backend) {
  CANRUN_ASSIGN_OR_RETURN(nlohmann::json settings, dir.read_settings());
  if (settings.value("backend", "") != backend) {
    return invalid_argument(fmt::format(
        "campaign folder {} holds a campaign on backend {}, not {}; give its backend or "
        "another --campaign-dir",
        dir.root().string(), settings.value("backend", "?"), backend));
  }
  SliceWork work;
  CANRUN_ASSIGN_OR_RETURN(work.items, dir.read_work());
  CANRUN_ASSIGN_OR_RETURN(work.recorded, dir.read_results(slice, &work.problems));
  work.indices.resize(work.items.size());
  for (std::size_t index = 0; index < work.indices.size(); ++index) work.indices[index] = index;
  return work;
}

Status check_worker_stack(const nlohmann::json& settings, const fs::path& dir,
                          const backend::BackendProfile& profile, const stack::Stack& stack) {
  if (settings.value("compiler_version", "") == stack.compiler_version &&
      settings.value("library_version", "") == stack.library_version) {
    return ok_status();
  }
  return Error(
      ErrorCode::kFailedCheck,
      fmt::format(
          "campaign {} was planned for {} {} and transformers {}; this node's stack has {} and "
          "transformers {}: its verdicts would belong to another stack",
          dir.string(), profile.compiler, settings.value("compiler_version", "?"),
          settings.value("library_version", "?"), stack.compiler_version, stack.library_version));
}

Result<SliceWork> worker_work(const CampaignDir& dir, int slice,
                              const backend::BackendProfile& profile, const stack::Stack& stack) {
  CANRUN_ASSIGN_OR_RETURN(nlohmann::json settings, dir.read_settings());
  CANRUN_RETURN_IF_ERROR(check_worker_stack(settings, dir.root(), profile, stack));
  SliceWork work;
  CANRUN_ASSIGN_OR_RETURN(work.items, dir.read_work());
  CANRUN_ASSIGN_OR_RETURN(auto slices, dir.read_slices(work.items.size()));
  if (slice < 0 || static_cast<std::size_t>(slice) >= slices.size()) {
    return invalid_argument(fmt::format("--index {}: campaign {} has slices 0 to {}", slice,
                                        dir.root().string(), slices.size() - 1));
  }
  work.indices = std::move(slices[static_cast<std::size_t>(slice)]);
  CANRUN_ASSIGN_OR_RETURN(work.recorded, dir.read_results(slice, &work.problems));
  return work;
}

std::map<std::size_t, dataset::VerdictRow> standing_rows(
    const std::vector<WorkItem>& items, const std::vector<dataset::VerdictRow>& rows) {
  std::map<std::size_t, dataset::VerdictRow> standing;
  for (std::size_t index = 0; index < items.size(); ++index) {
    const WorkItem& item = items[index];
    for (const dataset::VerdictRow& row : rows) {
      if (row.model_id != item.model_id.str() || row.task != item.task) continue;
      const bool same_run =
          !item.excluded() && !item.revision.empty() && row.revision.value_or("") == item.revision;
      const bool same_exclusion = item.excluded() && row.result == VerdictResult::kExcluded &&
                                  row.exclusion_reason == item.exclusion_reason &&
                                  row.error == item.why;
      if (same_run || same_exclusion) standing.emplace(index, row);
    }
  }
  return standing;
}

bool needs_retry(const dataset::VerdictRow& row, std::string_view retry) {
  if (row.result == VerdictResult::kExcluded) return false;
  if (retry == "all") return true;
  return retry == "failed" && row.result != VerdictResult::kPass;
}

SliceDecision decide_what_runs(const SliceWork& work, std::string_view retry) {
  SliceDecision decision;
  for (const std::size_t index : work.indices) {
    const auto done = work.recorded.find(index);
    if (done != work.recorded.end()) {
      decision.history.record_row(done->second);
      if (!needs_retry(done->second, retry)) {
        decision.standing.emplace(index, done->second);
        continue;
      }
    }
    (work.items[index].excluded() ? decision.to_exclude : decision.to_run).push_back(index);
  }
  return decision;
}

dataset::VerdictRow excluded_row(const WorkItem& item, const backend::BackendProfile& profile,
                                 const stack::Stack& stack) {
  trial::ExcludedModel model{
      item.model_id.str(), std::nullopt, item.task, item.exclusion_reason.value_or(""), item.why,
      std::nullopt};
  if (!item.revision.empty()) model.commit = item.revision;
  if (item.weights_bytes > 0) model.weights_bytes = item.weights_bytes;
  dataset::VerdictRow row = trial::excluded_row(model, profile, stack);
  if (item.stack_plan && !item.stack_plan->input.model_type.empty()) {
    trial::record_model_type(item.stack_plan->input.model_type, item.stack_plan, row);
  }
  return row;
}

Status VerdictRecorder::record(std::size_t index, const dataset::VerdictRow& row,
                               const RunTraces& traces) const {
  CANRUN_RETURN_IF_ERROR(dir_.write_result(role_.slice, index, row, traces.log, traces.images));
  if (!role_.worker) {
    // The log and images first: a row in the dataset has what goes beside it (catch_up_dataset
    // looks at rows only).
    CANRUN_RETURN_IF_ERROR(dataset_.record_log(row, traces.log));
    CANRUN_RETURN_IF_ERROR(dataset_.record_images(row, traces.images));
    CANRUN_RETURN_IF_ERROR(dataset_.upsert({row}));
  }
  nlohmann::json done = {
      {"event", "done"}, {"item", index}, {"result", std::string(to_string(row.result))}};
  if (const auto& cache = traces.compile_cache) {
    done["compile_cache"] = {{"hits", cache->hits}, {"misses", cache->misses}};
  }
  (void)dir_.journal(role_.slice, std::move(done));
  return ok_status();
}

Status VerdictRecorder::catch_up_dataset(
    const std::map<std::size_t, dataset::VerdictRow>& results) const {
  // The rows each stack's file holds now, read once per stack.
  std::map<dataset::StackKey, std::vector<dataset::VerdictRow>> stored;
  std::map<std::size_t, const dataset::VerdictRow*> behind;
  for (const auto& [index, row] : results) {
    CANRUN_ASSIGN_OR_RETURN(dataset::StackKey key, dataset::stack_key_of(row));
    auto [rows, first] = stored.try_emplace(std::move(key));
    if (first) {
      auto read = dataset_.read_stack(rows->first);
      if (read.ok()) {
        rows->second = std::move(*read);
      } else if (read.error().code() != ErrorCode::kNotFound) {
        return read.error();
      }
    }
    if (std::find(rows->second.begin(), rows->second.end(), row) == rows->second.end()) {
      behind.emplace(index, &row);
    }
  }
  if (behind.empty()) return ok_status();
  std::vector<dataset::VerdictRow> rows;
  for (const auto& [index, row] : behind) {
    // As record() does: what goes beside a row before the row (a verdict that stood from an
    // earlier campaign keeps the log it has).
    if (const std::string log = dir_.read_log(role_.slice, index); !log.empty()) {
      CANRUN_RETURN_IF_ERROR(dataset_.record_log(*row, log));
    }
    if (const auto images = dir_.read_images(role_.slice, index); !images.empty()) {
      CANRUN_RETURN_IF_ERROR(dataset_.record_images(*row, images));
    }
    rows.push_back(*row);
  }
  return dataset_.upsert(std::move(rows));
}

Result<Scheduler> slice_scheduler(CoreAllocator cores, HostResources host) {
  if (cores.syntax() == "count")
    host.cpus = std::max(host.cpus, static_cast<double>(cores.capacity()));
  CANRUN_ASSIGN_OR_RETURN(HostBudget budget, HostBudget::create(host));
  return Scheduler(std::move(cores), std::move(budget));
}

FirstJobs first_jobs(const std::vector<std::size_t>& to_run, const std::vector<WorkItem>& items,
                     const backend::BackendProfile& profile, const RuntimeHistory& history,
                     const std::function<bool(const WorkItem&)>& on_this_machine) {
  FirstJobs jobs;
  for (const std::size_t index : to_run) {
    Job job = job_of(index, items[index], profile, history);
    if (on_this_machine(items[index]) || items[index].revision.empty()) {
      jobs.scheduled.push_back(reference_job_of(index, items[index], job));
    } else {
      jobs.to_fetch.push_back(std::move(job));
    }
  }
  std::stable_sort(jobs.to_fetch.begin(), jobs.to_fetch.end(),
                   [](const Job& a, const Job& b) { return a.expected_s > b.expected_s; });
  return jobs;
}

}  // namespace canrun::campaign
