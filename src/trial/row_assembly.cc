#include "trial/row_assembly.h"

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "core/version.h"
#include "task/task.h"

namespace canrun::trial {
namespace {

using Clock = std::chrono::system_clock;

std::string host_name() {
  char name[256] = {};
  return ::gethostname(name, sizeof name - 1) == 0 ? name : "";
}

}  // namespace

std::string stack_json(const stack::Stack& stack, const backend::BackendProfile& profile) {
  nlohmann::json out(stack.versions);
  for (const auto& [option, on] : profile.compile_options) {
    out["compile:" + option] = on ? "true" : "false";
  }
  for (const auto& [variable, value] : profile.env) out["env:" + variable] = value;
  return out.dump();
}

namespace {

//! The columns every row has before anything runs: who, on what, when and where.
dataset::VerdictRow identity_row(const std::string& model_id,
                                 const std::optional<std::string>& commit, const std::string& task,
                                 const backend::BackendProfile& profile,
                                 const stack::Stack& stack) {
  dataset::VerdictRow row;
  row.model_id = model_id;
  row.revision = commit;
  row.task = task;
  row.backend = profile.name;
  row.device = profile.device;
  row.compiler = profile.compiler;
  row.compiler_version = stack.compiler_version;
  // The task's library, which may run on top of transformers (sentence-transformers,
  // diffusers): its version from the stack, empty when the stack lacks it (run.py says so).
  const task::TaskSpec* spec = task::find_task(task);
  row.library = spec ? std::string(spec->library) : std::string(dataset::kBaseLibrary);
  const auto version = stack.versions.find(row.library);
  row.library_version = row.library == dataset::kBaseLibrary ? stack.library_version
                        : version != stack.versions.end()    ? version->second
                                                             : std::string();
  row.stack = stack_json(stack, profile);
  row.started_at = std::chrono::time_point_cast<std::chrono::microseconds>(Clock::now());
  row.host = host_name();
  row.canrun_version = kCanrunVersion;
  return row;
}

}  // namespace

void record_model_type(std::optional<std::string> model_type,
                       const std::optional<plan::StackPlan>& stack_plan, dataset::VerdictRow& row) {
  // A campaign's run keeps the plan but not the checkpoint's facts (campaign/work.h).
  if (!model_type && stack_plan && !stack_plan->input.model_type.empty()) {
    model_type = stack_plan->input.model_type;
  }
  row.model_type = model_type;
  if (!model_type || !stack_plan || !stack_plan->support.known_model_type ||
      stack_plan->input.model_type != *model_type) {
    return;
  }
  row.claims_fullgraph = stack_plan->support.fullgraph;
  row.claims_tp_plan = stack_plan->support.tp_plan;
  row.claims_ep_plan = stack_plan->support.ep_plan;
}

dataset::VerdictRow start_row(const PreparedTrial& trial, const stack::Stack& stack) {
  if (trial.plan.exclusion) {
    dataset::VerdictRow row = excluded_row(
        {trial.checkpoint.model_id, trial.checkpoint.commit, trial.request.task,
         *trial.plan.exclusion, trial.plan.why,
         trial.plan.stack_plan ? std::optional(trial.plan.stack_plan->shards.weights_bytes)
                               : std::nullopt},
        trial.profile, stack);
    record_model_type(trial.checkpoint.facts.model_type, trial.plan.stack_plan, row);
    return row;
  }
  dataset::VerdictRow row = identity_row(trial.checkpoint.model_id, trial.checkpoint.commit,
                                         trial.request.task, trial.profile, stack);
  record_model_type(trial.checkpoint.facts.model_type, trial.plan.stack_plan, row);
  row.cores = trial.plan.cores;
  row.parallelism = std::string(to_string(trial.plan.parallelism));
  if (trial.plan.stack_plan) {
    row.weights_bytes = static_cast<std::int64_t>(trial.plan.stack_plan->shards.weights_bytes);
  }
  // packages: none, unless the run needs some on top of the stack (retry_with_packages).
  if (!trial.script.empty()) row.run_py = trial.script;
  return row;
}

dataset::VerdictRow excluded_row(const ExcludedModel& model, const backend::BackendProfile& profile,
                                 const stack::Stack& stack) {
  dataset::VerdictRow row = identity_row(model.model_id, model.commit, model.task, profile, stack);
  if (model.weights_bytes) row.weights_bytes = static_cast<std::int64_t>(*model.weights_bytes);
  row.result = VerdictResult::kExcluded;
  row.exclusion_reason = model.reason;
  row.error = model.why;
  return row;
}

namespace {

//! `a` ÷ `b` when both are known and positive.
std::optional<double> ratio(std::optional<double> a, std::optional<double> b) {
  if (!a || !b || !(*a > 0) || !(*b > 0)) return std::nullopt;
  return *a / *b;
}

//! The eager baseline's columns, speedup and memory ratio, and the long generation's tokens and
//! speed (its agreement is the host stage's: it compares with the reference).
void record_perf(const run::RunReport& report, std::string_view memory_measure,
                 dataset::VerdictRow& row) {
  // In the unit of `throughput`: the recipe's own, else decode speed (generation).
  row.eager_throughput =
      report.throughput ? report.eager_throughput : report.eager_decode_tokens_per_s;
  row.eager_ttft_s = report.eager_ttft_s;
  row.eager_peak_memory_bytes = report.eager_peak_memory_bytes;
  if (!report.eager_note.empty()) row.eager_note = report.eager_note;
  row.speedup = ratio(row.throughput, row.eager_throughput);
  const auto as_double = [](std::optional<std::int64_t> bytes) {
    return bytes ? std::optional(static_cast<double>(*bytes)) : std::nullopt;
  };
  row.memory_ratio =
      ratio(as_double(row.eager_peak_memory_bytes), as_double(row.peak_device_memory_bytes));
  if (row.eager_peak_memory_bytes) row.memory_measure = std::string(memory_measure);
  if (!report.long_tokens.empty()) {
    row.long_tokens = static_cast<std::int32_t>(report.long_tokens.size());
    row.long_decode_tokens_per_s = report.long_decode_tokens_per_s;
  }
}

}  // namespace

void record_measurements(const run::ScriptRun& run, std::string_view memory_measure,
                         TrialOutcome& outcome) {
  dataset::VerdictRow& row = outcome.row;
  outcome.stdout_bytes = run.outcome.stdout_bytes;
  row.runtime_s = run.outcome.wall_s;
  if (const auto& report = run.report) {
    row.load_s = report->load_s;
    row.compile_s = report->compile_s;
    row.generate_s = report->generate_s;
    row.ttft_s = report->ttft_s;
    row.decode_tokens_per_s = report->decode_tokens_per_s;
    if (report->throughput) {
      row.throughput = report->throughput;
      row.throughput_unit = report->throughput_unit;
    } else if (report->decode_tokens_per_s) {
      row.throughput = report->decode_tokens_per_s;
      row.throughput_unit = "tokens/s";
    }
    row.peak_device_memory_bytes = report->peak_device_memory_bytes;
    record_perf(*report, memory_measure, row);
    outcome.compile_cache = report->compile_cache;
  }
}

}  // namespace canrun::trial
