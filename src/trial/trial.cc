#include "trial/trial.h"

#include <fmt/format.h>

#include "cache/cache_tree.h"
#include "catalog/exclusions.h"
#include "core/atomic_file.h"
#include "core/cache_dir.h"
#include "core/log.h"
#include "dataset/dataset.h"
#include "process/box.h"
#include "run/classify.h"
#include "run/script_run.h"
#include "task/task.h"
#include "trial/exclusion.h"
#include "trial/packages_retry.h"
#include "trial/row_assembly.h"
#include "trial/verdict_rules.h"
#include "verify/reference_store.h"

namespace canrun::trial {
namespace {

//! A recipe that runs on one core only (TaskSpec::shards false) takes no plan of several: an
//! override asking for them is refused; a planned one is too_large, why in the planner's own
//! figures (without its search for a parallel plan this recipe could not use anyway).
Status fit_one_core_recipe(std::string_view task, bool overridden, TrialPlan& plan) {
  const task::TaskSpec* spec = task::find_task(task);
  const bool needs_ranks = plan.exclusion ? *plan.exclusion == "no_parallel_plan" : plan.cores > 1;
  if (spec == nullptr || spec->shards || !needs_ranks) return ok_status();
  if (overridden) {
    return invalid_argument(
        fmt::format("--cores {}: the {} recipe runs on one core only", plan.cores, spec->name));
  }
  const plan::PlannedShards& shards = plan.stack_plan->shards;
  plan.exclusion = "too_large";
  plan.why = fmt::format(
      "{} of weights need more than one core ({} per core); the {} recipe runs on one core only",
      plan::gib(static_cast<double>(shards.weights_bytes)),
      plan::gib(static_cast<double>(shards.budget_bytes)), spec->name);
  return ok_status();
}

namespace fs = std::filesystem;

//! canrun test runs what is on this machine: a checkpoint the HF cache lacks is a usage error
//! that says how to get it, not an unreachable Hub.
Error not_on_this_machine(const Error& error, const std::string& model) {
  if (!error.has_reason(reason::kNotCached)) return error;
  return not_found(
             fmt::format("{}; download it first, e.g. `hf download {}`", error.message(), model))
      .with_reason(reason::kNotCached);
}

//! The judge's judgement of a sharded run's text, which continues the recipe's prompt.
Result<judge::Judgement> judge_text(const PreparedTrial& trial, const std::string& text,
                                    process::ProcessLauncher& launcher) {
  judge::Judge::Options options;
  options.model = trial.request.judge_model;
  options.cache_dir = trial.cache_dir;  // the judge runs in canrun's own Python, not the stack's
  CANRUN_ASSIGN_OR_RETURN(judge::Judge judge, judge::Judge::open(options, launcher));
  log::info("asking the judge {} whether the output is fluent English", judge.name());
  return judge.judge({trial.recipe.prompt, text});
}

//! The trial's task as it verifies this model (its family's comparison: task::spec_for_model).
task::TaskSpec task_spec_of(const PreparedTrial& trial) {
  const task::TaskSpec* spec = task::find_task(trial.request.task);
  if (spec == nullptr) {  // a task without a recipe is excluded before anything is verified
    task::TaskSpec unknown;
    unknown.name = trial.request.task;
    return unknown;
  }
  return task::spec_for_model(*spec, trial.checkpoint.facts.architectures);
}

//! How the trial's task is verified on one core.
task::Comparison comparison_of(const PreparedTrial& trial) {
  return task_spec_of(trial).comparison;
}

//! The libraries' versions a reference depends on: transformers', and the task's library's when
//! it runs on top ("5.18.0 sentence-transformers 6.3.0").
std::string reference_library_version(const PreparedTrial& trial) {
  std::string out = trial.stack ? trial.stack->library_version : trial.library_version;
  const task::TaskSpec* spec = task::find_task(trial.request.task);
  if (trial.stack && spec != nullptr && spec->library != dataset::kBaseLibrary) {
    const auto found = trial.stack->versions.find(std::string(spec->library));
    out += fmt::format(" {} {}", spec->library,
                       found == trial.stack->versions.end() ? "-" : found->second);
  }
  return out;
}

//! What a reference backend computes differently from the shipped one (its device, compiler,
//! imports, options and environment), or empty for a profile that computes the same: a
//! reference made by another belongs to another key, and the shipped one's keys stay as they
//! were before this was keyed.
Result<std::string> reference_backend_identity(const backend::BackendProfile& profile) {
  const auto identity = [](const backend::BackendProfile& of) {
    std::string out =
        fmt::format("{} {} [{}]", of.torch_device, of.compile_backend, fmt::join(of.imports, ","));
    for (const auto& [option, on] : of.compile_options) out += fmt::format(" {}={}", option, on);
    for (const auto& [name, value] : of.env) out += fmt::format(" {}={}", name, value);
    return out;
  };
  // The shipped profile's, read once: the backends folders do not change while canrun runs.
  static const Result<std::string> shipped = [&]() -> Result<std::string> {
    CANRUN_ASSIGN_OR_RETURN(const backend::BackendProfile found,
                            backend::find_profile(kReferenceBackend));
    return identity(found);
  }();
  if (!shipped.ok()) return shipped.error();
  const std::string mine = identity(profile);
  return mine == *shipped ? std::string() : mine;
}

}  // namespace

fs::path absolute_cache_dir(const TrialRequest& request) {
  // Absolute: run.py runs in its own folder, and reads the compile cache's path from its env.
  return fs::absolute(request.cache_dir.empty() ? default_cache_dir() : request.cache_dir);
}

Result<backend::BackendProfile> trial_profile(const TrialRequest& request) {
  CANRUN_ASSIGN_OR_RETURN(backend::BackendProfile profile, backend::find_profile(request.backend));
  CANRUN_RETURN_IF_ERROR(
      backend::override_memory(profile.topology, request.memory_per_core_gib, request.reserve_gib));
  return profile;
}

Result<TrialPlan> plan_trial(const Checkpoint& checkpoint, std::string_view task,
                             const backend::BackendProfile& profile,
                             const stack::StackPython& python, const std::string& library_version,
                             const std::optional<PlanOverride>& plan_override) {
  TrialPlan out;
  // What the checkpoint is excludes it before any plan, the override's too: never run remote
  // code (diffusers before 0.36 imports a pipeline component's module from the repo unasked).
  if (auto excluded = checkpoint_exclusion(checkpoint, task, profile)) {
    out.exclusion = std::move(excluded->reason);
    out.why = std::move(excluded->why);
    return out;
  }
  if (plan_override && plan_override->parallelism) {
    out.cores = plan_override->cores;
    out.parallelism = *plan_override->parallelism;
    return out;
  }
  // Weights that hold no tensors are not planned: the model runs on one core (or the cores
  // asked for), and its run says what is wrong with it.
  if (checkpoint.facts.weights_bytes == 0) {
    if (plan_override) out.cores = plan_override->cores;
    return out;
  }
  CANRUN_ASSIGN_OR_RETURN(
      plan::StackPlan stack_plan,
      plan::plan_on_stack(checkpoint.facts, python, library_version, profile.topology));
  // Cores asked for without a parallelism: the one the stack offers at that many.
  if (plan_override) {
    stack_plan.shards = plan::plan_at_degree(stack_plan.input, stack_plan.support, profile.topology,
                                             plan_override->cores);
  }
  const plan::PlannedShards& shards = stack_plan.shards;
  if (shards.placed) {
    out.cores = shards.cores;
    out.parallelism = shards.parallelism;
  } else {
    out.exclusion = shards.exclusion;
    out.why = shards.why;
  }
  out.stack_plan = std::move(stack_plan);
  CANRUN_RETURN_IF_ERROR(fit_one_core_recipe(task, plan_override.has_value(), out));
  return out;
}

Result<PreparedTrial> prepare_trial(const TrialRequest& given, process::ProcessLauncher& launcher,
                                    std::string library_version) {
  if (!given.task.empty()) CANRUN_RETURN_IF_ERROR(recipe::check_recipe_task(given.task));
  TrialRequest request = given;
  CANRUN_ASSIGN_OR_RETURN(backend::BackendProfile profile, trial_profile(request));
  // Excluded before its checkpoint says anything (curated, gated): for the task given, or the
  // first there is.
  const auto excluded_before_resolving = [&](Exclusion exclusion) {
    if (request.task.empty()) request.task = "text-generation";
    Checkpoint checkpoint;
    checkpoint.model_id = checkpoint.load_from = request.model;
    checkpoint.revision = request.revision;
    TrialPlan plan;
    plan.exclusion = std::move(exclusion.reason);
    plan.why = std::move(exclusion.why);
    return prepare_planned(request, std::move(profile), std::move(checkpoint), "", std::move(plan));
  };
  if (!request.exclusions_file.empty() && !is_folder(request.model)) {
    CANRUN_ASSIGN_OR_RETURN(const catalog::Exclusions exclusions,
                            catalog::Exclusions::load(request.exclusions_file));
    CANRUN_ASSIGN_OR_RETURN(const ModelId id, ModelId::parse(request.model));
    if (auto curated = curated_exclusion(exclusions, id)) {
      return excluded_before_resolving(std::move(*curated));
    }
  }
  auto resolved = resolve_checkpoint({request.model, request.revision, std::nullopt});
  if (!resolved.ok()) {
    if (auto gated = resolve_exclusion(resolved.error())) {
      return excluded_before_resolving(std::move(*gated));
    }
    return resolved.error();
  }
  Checkpoint checkpoint = std::move(resolved).value();
  if (request.task.empty()) {
    // A checkpoint without weights has no facts to tell its task by: it is excluded anyway.
    ModelTask taken = task_of_model(checkpoint.facts);
    if (!checkpoint.no_safetensors) {
      log::info("task {}, {}; --task chooses another", taken.task, taken.why);
    }
    request.task = std::move(taken.task);
  }
  if (auto excluded = checkpoint_exclusion(checkpoint, request.task, profile)) {
    TrialPlan plan;
    plan.exclusion = std::move(excluded->reason);
    plan.why = std::move(excluded->why);
    return prepare_planned(request, std::move(profile), std::move(checkpoint),
                           std::move(library_version), std::move(plan));
  }
  const stack::StackPython python(request.python, absolute_cache_dir(request) / "stack", launcher);
  if (library_version.empty()) {
    CANRUN_ASSIGN_OR_RETURN(library_version, stack::probe_library_version(python));
  }
  CANRUN_ASSIGN_OR_RETURN(TrialPlan plan, plan_trial(checkpoint, request.task, profile, python,
                                                     library_version, request.plan_override));
  return prepare_planned(request, std::move(profile), std::move(checkpoint),
                         std::move(library_version), std::move(plan));
}

Result<PreparedTrial> prepare_planned(const TrialRequest& request, backend::BackendProfile profile,
                                      Checkpoint checkpoint, std::string library_version,
                                      TrialPlan plan) {
  PreparedTrial trial;
  trial.request = request;
  trial.profile = std::move(profile);
  trial.cache_dir = absolute_cache_dir(request);
  trial.python = request.python.empty() ? stack::default_python() : request.python;
  trial.checkpoint = std::move(checkpoint);
  trial.library_version = std::move(library_version);
  trial.plan = std::move(plan);
  CANRUN_RETURN_IF_ERROR(
      fit_one_core_recipe(request.task, request.plan_override.has_value(), trial.plan));
  recipe::RecipeRequest& recipe = trial.recipe;
  recipe.model = trial.checkpoint.load_from;
  recipe.model_id = trial.checkpoint.model_id;
  recipe.revision = trial.checkpoint.revision;
  recipe.task = request.task;
  recipe.prompt = request.prompt.empty() ? recipe::default_prompt(request.task) : request.prompt;
  recipe.new_tokens = request.new_tokens;
  recipe.long_tokens = request.long_tokens;
  recipe.perf = request.perf;
  recipe.cores = trial.plan.cores;
  recipe.parallelism = trial.plan.parallelism;
  if (!trial.plan.exclusion) {
    CANRUN_ASSIGN_OR_RETURN(trial.script, recipe::render_recipe(recipe, trial.profile));
  }
  return trial;
}

Result<TrialReference> reference_for(const PreparedTrial& trial, int first_core,
                                     const std::vector<fs::path>& python_path,
                                     process::ProcessLauncher& launcher) {
  // Once per key: whoever computes a key holds its lock; a second asker waits, then finds it.
  const std::string& model_id = trial.checkpoint.model_id;
  const verify::ReferenceStore references(cache::reference_cache_root(trial.cache_dir));
  CANRUN_ASSIGN_OR_RETURN(backend::BackendProfile reference_profile,
                          backend::find_profile(trial.request.reference_backend));
  reference_profile.dtype = trial.profile.dtype;
  CANRUN_ASSIGN_OR_RETURN(std::string reference_backend,
                          reference_backend_identity(reference_profile));
  const verify::ReferenceKey key{model_id,
                                 trial.checkpoint.revision,
                                 trial.request.task,
                                 trial.recipe.prompt,
                                 trial.request.new_tokens,
                                 trial.profile.dtype,
                                 reference_library_version(trial),
                                 std::move(reference_backend),
                                 recipe::long_tokens_of(trial.recipe)};
  TrialReference out;
  out.python_path = python_path;
  out.reference = references.find(key);
  if (!out.reference) {
    CANRUN_ASSIGN_OR_RETURN(FileLock computing,
                            FileLock::acquire(references.path_of(key).string() + ".lock"));
    out.reference = references.find(key);
  }
  out.reused = out.reference.has_value();
  if (out.reference) return out;

  recipe::RecipeRequest reference_request = trial.recipe;
  reference_request.cores = 1;  // the reference runs on one core, unsharded
  reference_request.parallelism = Parallelism::kNone;
  CANRUN_ASSIGN_OR_RETURN(std::string reference_script,
                          recipe::render_recipe(reference_request, reference_profile));
  if (comparison_of(trial) == task::Comparison::kTokens) {
    log::info("running the CPU reference of {} ({} tokens)", model_id,
              std::max(trial.request.new_tokens, recipe::long_tokens_of(trial.recipe)));
  } else {
    log::info("running the CPU reference of {} ({})", model_id, trial.request.task);
  }
  CANRUN_ASSIGN_OR_RETURN(out.run_dir,
                          run::make_run_dir(trial.cache_dir / "runs", model_id, "reference"));
  const run::ScriptPlace place{trial.cache_dir,
                               trial.stack ? trial.stack->compiler_version : "",
                               {first_core, 1},
                               std::nullopt,
                               python_path};
  CANRUN_ASSIGN_OR_RETURN(
      run::ScriptRun ref_run,
      run::run_script(reference_script, out.run_dir, trial.python,
                      run::script_environment(reference_profile, place), trial.request.timeout,
                      launcher, run::script_caches(reference_profile, place)));
  if (auto failure = run::classify(ref_run.outcome, ref_run.report)) {
    out.failure = std::move(failure);
    return out;
  }
  out.reference = verify::Reference{ref_run.report->tokens,
                                    ref_run.report->text,
                                    ref_run.report->embeddings,
                                    ref_run.report->queries,
                                    {},
                                    {},
                                    ref_run.report->margins,
                                    ref_run.report->long_tokens};
  for (auto [name, field, what] :
       {std::tuple{&run::RunReport::outputs_file, &verify::Reference::outputs_file, "outputs"},
        std::tuple{&run::RunReport::image_file, &verify::Reference::image_file, "image"}}) {
    if ((*ref_run.report).*name == "") continue;
    CANRUN_ASSIGN_OR_RETURN((*out.reference).*field,
                            run_file(out.run_dir, (*ref_run.report).*name, what));
  }
  if (auto saved = references.save(key, *out.reference); !saved.ok())
    log::warning("{}", saved.error().message());
  return out;
}

Result<DeviceRun> run_on_device(const PreparedTrial& trial, const Placement& placement,
                                process::ProcessLauncher& launcher,
                                std::optional<TrialReference> reference) {
  const stack::StackPython python(trial.python, trial.cache_dir / "stack", launcher);
  stack::Stack stack;
  if (trial.stack) {
    stack = *trial.stack;
  } else {
    CANRUN_ASSIGN_OR_RETURN(stack, stack::probe_stack(python, trial.profile));
  }
  DeviceRun device;
  device.reference = std::move(reference);
  TrialOutcome& outcome = device.outcome;
  dataset::VerdictRow& row = outcome.row;
  row = start_row(trial, stack);
  if (trial.plan.exclusion) return device;  // nothing to run: start_row made its EXCLUDED row
  row.isolation = process::isolation();
  CANRUN_RETURN_IF_ERROR(require_local_files(trial.checkpoint));
  if (placement.cores.count != trial.plan.cores) {
    return invalid_argument(fmt::format("placed on {} cores, but the plan needs {}",
                                        placement.cores.count, trial.plan.cores));
  }
  const std::string& model_id = trial.checkpoint.model_id;
  run::ScriptPlace& place = device.place;
  place = {trial.cache_dir, stack.compiler_version, placement.cores, placement.pinning, {}};

  // A failure here is the verdict: no reference is needed for it.
  log::info("running {} on {}", model_id, trial.profile.name);
  if (placement.run_dir.empty()) {
    CANRUN_ASSIGN_OR_RETURN(
        outcome.run_dir, run::make_run_dir(trial.cache_dir / "runs", model_id, trial.profile.name));
  } else {
    outcome.run_dir = fs::absolute(placement.run_dir);
  }
  // The reference's tokens, for run.py's teacher-forced pass: a file in its folder, named by a
  // variable (run.py run alone has neither, and skips the pass).
  std::map<std::string, std::string> env = run::script_environment(trial.profile, place);
  // The compiler's working files in the run's own folder, not one every run on the machine
  // shares (TORCH_NEURONX_DEBUG_DIR for the neuron profile).
  for (auto& [name, folder] : trial.profile.run_folder_env(outcome.run_dir)) env[name] = folder;
  if (device.reference && device.reference->reference &&
      !device.reference->reference->tokens.empty()) {
    // All of them: the check's, and the long generation's after them when there is one.
    const verify::Reference& reference = *device.reference->reference;
    const fs::path tokens_file = outcome.run_dir / "reference.json";
    CANRUN_RETURN_IF_ERROR(write_file_atomically(
        tokens_file,
        nlohmann::json{
            {"tokens", reference.long_tokens.empty() ? reference.tokens : reference.long_tokens}}
            .dump()));
    env[std::string(run::kReferenceTokensVariable)] = tokens_file.string();
  }
  CANRUN_ASSIGN_OR_RETURN(
      run::ScriptRun backend_run,
      run::run_script(trial.script, outcome.run_dir, trial.python, env, trial.request.timeout,
                      launcher, run::script_caches(trial.profile, place)));
  record_measurements(backend_run, trial.profile.peak_memory, outcome);
  auto failure = run::classify(backend_run.outcome, backend_run.report);
  std::vector<std::string> learned;  // the distributions put on top so far
  for (int retry = 0; retry < kPackageRetries && failure &&
                      failure->result == VerdictResult::kFailLoad && backend_run.report;
       ++retry) {
    CANRUN_ASSIGN_OR_RETURN(std::optional<run::ScriptRun> retried,
                            retry_with_packages(trial, python, backend_run.report->error, learned,
                                                outcome, place, *failure, env, launcher));
    if (!retried) break;
    backend_run = std::move(*retried);
    record_measurements(backend_run, trial.profile.peak_memory, outcome);
    failure = run::classify(backend_run.outcome, backend_run.report);
  }
  if (failure) {
    row.result = failure->result;
    row.error = failure->error;
    row.error_signature = failure->signature;
    return device;
  }
  if (comparison_of(trial) == task::Comparison::kTokens) {
    row.new_tokens = static_cast<std::int32_t>(backend_run.report->tokens.size());
    row.output_text = backend_run.report->text;
  }
  if (const auto& compiled = backend_run.report->long_compiled_graphs; compiled && *compiled) {
    log::warning(
        "{}: the long generation compiled {} graph(s) anew; it should reuse the graphs of the "
        "first call, which sized the static cache for it",
        model_id, *compiled);
  }
  if (const auto& compiled = backend_run.report->agreement_compiled_graphs; compiled && *compiled) {
    log::warning(
        "{}: the teacher-forced pass compiled {} graph(s) anew; it should reuse the "
        "compiled decode step",
        model_id, *compiled);
  }
  device.report = std::move(backend_run.report);
  return device;
}

Result<TrialOutcome> verify_on_host(const PreparedTrial& trial, DeviceRun device,
                                    process::ProcessLauncher& launcher) {
  TrialOutcome outcome = std::move(device.outcome);
  if (!device.report) return outcome;  // the device stage decided
  dataset::VerdictRow& row = outcome.row;
  const run::RunReport& report = *device.report;
  const std::string& model_id = trial.checkpoint.model_id;

  // The reference step ran before the device stage; it is run here only when it did not, or
  // when it failed without the packages on top that the run learned since.
  std::optional<TrialReference>& found = device.reference;
  if (!found || (found->failure && found->python_path != device.place.python_path)) {
    CANRUN_ASSIGN_OR_RETURN(
        found, reference_for(trial, device.place.cores.first, device.place.python_path, launcher));
  }
  outcome.reference_reused = found->reused;
  const int cores = trial.plan.cores;
  if (found->failure && cores > 1 && !trial.request.agreement_decides) {
    log::warning(
        "the CPU reference of {} failed ({}), so match_tokens and agreement are not "
        "known: {}",
        model_id, to_string(found->failure->result), (found->run_dir / "run.py").string());
  } else if (found->failure) {
    fail_for_reference(*found->failure, found->run_dir, row);
    return outcome;
  }
  // The agreement counts only when it was measured against this very reference.
  if (found->reference && report.agreement) row.agreement = report.agreement;
  if (found->reference && !found->reference->long_tokens.empty()) {
    record_long_agreement(report, row);
  }

  // Verify.
  if (cores > 1) {
    run::RunReport measured = report;
    if (!row.agreement) measured.agreement.reset();
    if (trial.request.agreement_decides) {
      CANRUN_RETURN_IF_ERROR(
          agree_sharded_run(measured, *found->reference, trial.profile.dtype, row));
    } else {
      CANRUN_ASSIGN_OR_RETURN(const judge::Judgement judgement,
                              judge_text(trial, report.text, launcher));
      judge_sharded_run(measured, found->reference, judgement, row);
    }
  } else {
    const task::TaskSpec spec = task_spec_of(trial);
    switch (spec.comparison) {
      case task::Comparison::kTokens:
        compare_tokens_with_reference(report, *found->reference, trial.profile.dtype, row);
        row.output_text = predictions_text(spec, report, *found->reference);
        break;
      case task::Comparison::kEmbeddings:
        compare_embeddings_with_reference(report, *found->reference, trial.profile.dtype, row);
        break;
      case task::Comparison::kLogits:
        CANRUN_RETURN_IF_ERROR(compare_logits_with_reference(
            spec, outcome.run_dir, report, *found->reference, trial.profile.dtype, row));
        break;
      case task::Comparison::kRanking:
        CANRUN_RETURN_IF_ERROR(compare_ranking_with_reference(
            spec, outcome.run_dir, report, *found->reference, trial.profile.dtype, row));
        break;
      case task::Comparison::kImage:
        CANRUN_RETURN_IF_ERROR(compare_image_with_reference(
            outcome.run_dir, report, *found->reference, trial.profile.dtype, row));
        break;
    }
  }
  if (!report.image_file.empty()) {  // the images the Space shows side by side
    if (auto image = run_file(outcome.run_dir, report.image_file, "image"); image.ok())
      outcome.images[std::string(dataset::kImageRole)] = *image;
    if (found->reference && !found->reference->image_file.empty())
      outcome.images[std::string(dataset::kReferenceImageRole)] = found->reference->image_file;
  }
  if (!report.input_image_file.empty()) {  // what the model was shown
    if (auto image = run_file(outcome.run_dir, report.input_image_file, "input image"); image.ok())
      outcome.images[std::string(dataset::kInputImageRole)] = *image;
  }
  if (!report.input_audio_file.empty()) {  // what the model heard
    if (auto audio = run_file(outcome.run_dir, report.input_audio_file, "input audio"); audio.ok())
      outcome.images[std::string(dataset::kInputAudioRole)] = *audio;
  }
  if (!outcome.images.empty())
    CANRUN_RETURN_IF_ERROR(dataset::name_output_files(row, outcome.images));
  return outcome;
}

Result<TrialOutcome> run_prepared_trial(const PreparedTrial& trial, const Placement& placement,
                                        process::ProcessLauncher& launcher) {
  std::optional<TrialReference> reference;
  if (!trial.plan.exclusion) {  // the reference first: run.py is given its tokens
    CANRUN_RETURN_IF_ERROR(require_local_files(trial.checkpoint));
    CANRUN_ASSIGN_OR_RETURN(reference, reference_for(trial, placement.cores.first, {}, launcher));
  }
  CANRUN_ASSIGN_OR_RETURN(DeviceRun device,
                          run_on_device(trial, placement, launcher, std::move(reference)));
  return verify_on_host(trial, std::move(device), launcher);
}

Result<TrialOutcome> run_trial(const TrialRequest& request, process::ProcessLauncher& launcher) {
  CANRUN_ASSIGN_OR_RETURN(backend::BackendProfile profile, trial_profile(request));
  const stack::StackPython python(request.python, absolute_cache_dir(request) / "stack", launcher);
  CANRUN_ASSIGN_OR_RETURN(stack::Stack stack, stack::probe_stack(python, profile));
  auto prepared = prepare_trial(request, launcher, stack.library_version);
  if (!prepared.ok()) return not_on_this_machine(prepared.error(), request.model);
  PreparedTrial trial = std::move(prepared).value();
  trial.stack = std::move(stack);
  return run_prepared_trial(trial, Placement{{0, trial.plan.cores}, {}, {}}, launcher);
}

}  // namespace canrun::trial
