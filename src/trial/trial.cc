#include "trial/trial.h"

#include <fmt/format.h>
#include <unistd.h>

#include "core/atomic_file.h"
#include "core/cache_dir.h"
#include "core/log.h"
#include "core/version.h"
#include "dataset/dataset.h"
#include "run/classify.h"
#include "run/packages_on_top.h"
#include "run/script_run.h"
#include "task/task.h"
#include "verify/embeddings.h"
#include "verify/image.h"
#include "verify/logits.h"
#include "verify/reference_store.h"
#include "verify/verification.h"

namespace canrun::trial {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::system_clock;

std::string host_name() {
  char name[256] = {};
  return ::gethostname(name, sizeof name - 1) == 0 ? name : "";
}

//! canrun test runs what is on this machine: a checkpoint the HF cache lacks is a usage error
//! that says how to get it, not an unreachable Hub.
Error not_on_this_machine(const Error& error, const std::string& model) {
  if (!error.has_reason(reason::kNotCached)) return error;
  return not_found(
             fmt::format("{}; download it first, e.g. `hf download {}`", error.message(), model))
      .with_reason(reason::kNotCached);
}

//! The `stack` column: every version, and what else changes results: the profile's compile
//! options ("compile:fullgraph") and the variables it sets for runs ("env:NEURON_CC_FLAGS").
std::string stack_json(const stack::Stack& stack, const backend::BackendProfile& profile) {
  nlohmann::json out(stack.versions);
  for (const auto& [option, on] : profile.compile_options) {
    out["compile:" + option] = on ? "true" : "false";
  }
  for (const auto& [variable, value] : profile.env) out["env:" + variable] = value;
  return out.dump();
}

//! The row's columns that do not depend on how the run went.
dataset::VerdictRow start_row(const PreparedTrial& trial, const stack::Stack& stack) {
  dataset::VerdictRow row;
  row.model_id = trial.checkpoint.model_id;
  row.revision = trial.checkpoint.commit;
  row.task = trial.request.task;
  row.backend = trial.profile.name;
  row.device = trial.profile.device;
  row.compiler = trial.profile.compiler;
  row.compiler_version = stack.compiler_version;
  // The task's library, which may run on top of transformers (sentence-transformers,
  // diffusers): its version from the stack, empty when the stack lacks it (run.py says so).
  const task::TaskSpec* spec = task::find_task(trial.request.task);
  row.library = spec ? std::string(spec->library) : std::string(dataset::kBaseLibrary);
  const auto version = stack.versions.find(row.library);
  row.library_version = row.library == dataset::kBaseLibrary ? stack.library_version
                        : version != stack.versions.end()    ? version->second
                                                             : std::string();
  if (!trial.plan.exclusion) {
    row.cores = trial.plan.cores;
    row.parallelism = trial.plan.parallelism;
  }
  if (trial.plan.stack_plan) {
    row.weights_bytes = static_cast<std::int64_t>(trial.plan.stack_plan->shards.weights_bytes);
  }
  row.stack = stack_json(stack, trial.profile);
  // packages: none, unless the run needs some on top of the stack (retry_with_packages).
  if (!trial.script.empty()) row.run_py = trial.script;
  row.started_at = std::chrono::time_point_cast<std::chrono::microseconds>(Clock::now());
  row.host = host_name();
  row.canrun_version = kCanrunVersion;
  return row;
}

void record_measurements(const run::ScriptRun& run, TrialOutcome& outcome) {
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
    outcome.compile_cache = report->compile_cache;
  }
}

//! A sharded run that generated tokens: the judge's verdict on the text and, where the run
//! measured its teacher-forced agreement with the reference, the agreement too; match_tokens
//! against the reference when there is one (information).
Status judge_sharded_run(const PreparedTrial& trial, const run::RunReport& report,
                         const std::optional<verify::Reference>& reference,
                         process::ProcessLauncher& launcher, dataset::VerdictRow& row) {
  if (reference)
    row.match_tokens = verify::compare_tokens(report.tokens, reference->tokens).match_tokens;
  judge::Judge::Options options;
  options.model = trial.request.judge_model;
  options.cache_dir = trial.cache_dir;  // the judge runs in canrun's own Python, not the stack's
  CANRUN_ASSIGN_OR_RETURN(judge::Judge judge, judge::Judge::open(options, launcher));
  log::info("asking the judge {} whether the output is fluent English", judge.name());
  CANRUN_ASSIGN_OR_RETURN(judge::Judgement judgement,
                          judge.judge({trial.recipe.prompt, report.text}));
  const bool by_agreement = reference && report.agreement;
  row.verification = std::string(by_agreement ? verify::kVerificationJudgeAndAgreement
                                              : verify::kVerificationJudge);
  row.judge_score = judgement.score;
  row.judge_threshold = judgement.threshold;
  row.judge_model = judgement.judge;
  row.judge_parts = judgement.parts;
  const std::string judged =
      fmt::format("the judge {} scored the text {:.3f}, {} its threshold {:.3f}", judgement.judge,
                  judgement.score, judgement.fluent ? "at or above" : "below", judgement.threshold);
  if (by_agreement && *report.agreement < verify::kAgreementThreshold) {
    // The stronger evidence: fed the reference's own tokens, the sharded model predicts other
    // next tokens — whatever its free-running text looks like.
    row.result = VerdictResult::kFailMismatch;
    const std::int64_t positions = report.agreement_positions.value_or(0);
    const auto agreed =
        static_cast<std::int64_t>(*report.agreement * static_cast<double>(positions) + 0.5);
    row.error = fmt::format(
        "teacher-forced agreement {:.3f} below threshold {:.2f}: fed the CPU reference's tokens, "
        "the model's next token was the reference's at {} of {} positions ({}: {})\n"
        "reference: {}\ngot:       {}",
        *report.agreement, verify::kAgreementThreshold, agreed, positions, judged,
        judgement.fluent ? "fluent English" : "not fluent English", reference->text, report.text);
    row.error_signature = "FAIL_MISMATCH | teacher-forced agreement below threshold";
  } else if (judgement.fluent) {
    row.result = VerdictResult::kPass;
  } else {
    row.result = VerdictResult::kFailJudge;
    row.error = fmt::format("{}: not fluent English\ngot: {}", judged, report.text);
    row.error_signature = "FAIL_JUDGE";
  }
  return ok_status();
}

//! One core: the tokens must equal the reference's.
void compare_with_reference(const run::RunReport& report, const verify::Reference& reference,
                            dataset::VerdictRow& row) {
  row.verification = std::string(verify::kVerificationReference);
  const verify::TokenMatch match = verify::compare_tokens(report.tokens, reference.tokens);
  row.match_tokens = match.match_tokens;
  if (match.identical) {
    row.result = VerdictResult::kPass;
    return;
  }
  row.result = VerdictResult::kFailMismatch;
  row.error =
      fmt::format("token {} of {} differs from the CPU reference\nreference: {}\ngot:       {}",
                  match.match_tokens + 1, reference.tokens.size(), reference.text, report.text);
  row.error_signature = "FAIL_MISMATCH";
}

//! How the trial's task is verified on one core.
task::Comparison comparison_of(const PreparedTrial& trial) {
  const task::TaskSpec* spec = task::find_task(trial.request.task);
  return spec != nullptr ? spec->comparison : task::Comparison::kTokens;
}

//! A file the run named in its folder; kCorrupt when it said it wrote one that is not there.
Result<fs::path> run_file(const fs::path& run_dir, const std::string& name, std::string_view what) {
  if (name.empty()) return corrupt(fmt::format("run.py did not name its {} file", what));
  const fs::path path = run_dir / name;
  if (!fs::is_regular_file(path))
    return corrupt(fmt::format("run.py named {} as its {} file, but it is not there", name, what));
  return path;
}

void fail_comparison(dataset::VerdictRow& row, std::string error, std::string_view what) {
  row.result = VerdictResult::kFailMismatch;
  row.error = std::move(error);
  row.error_signature = fmt::format("FAIL_MISMATCH | {} differ from the CPU reference", what);
}

//! An encoder task: the logits in the run's outputs file against the reference's.
Status compare_logits_with_reference(const task::TaskSpec& spec, const fs::path& run_dir,
                                     const run::RunReport& report,
                                     const verify::Reference& reference, const std::string& dtype,
                                     dataset::VerdictRow& row) {
  row.verification = std::string(verify::kVerificationReference);
  CANRUN_ASSIGN_OR_RETURN(const fs::path file, run_file(run_dir, report.outputs_file, "outputs"));
  CANRUN_ASSIGN_OR_RETURN(const verify::Tensor got, verify::read_tensor(file, "logits"));
  CANRUN_ASSIGN_OR_RETURN(const verify::Tensor expected,
                          verify::read_tensor(reference.outputs_file, "logits"));
  const verify::LogitsComparison compared = verify::compare_logits(got, expected, dtype);
  const std::string_view row_noun = spec.logits_row.empty() ? "row" : spec.logits_row;
  const double threshold = verify::logits_relative_error_threshold(dtype);
  row.output_text = fmt::format(
      "{}\n{} rows of logits; largest relative error against the CPU reference {:.3g} "
      "(threshold {:g}){}",
      report.text, compared.rows, compared.max_relative_error, threshold,
      report.throughput ? fmt::format("; {:.1f} {}", *report.throughput, report.throughput_unit)
                        : std::string());
  if (!compared.shape_error.empty()) {
    fail_comparison(
        row, fmt::format("the logits do not match the CPU reference's: {}", compared.shape_error),
        "logits");
  } else if (compared.argmax_differs) {
    fail_comparison(
        row,
        fmt::format("{} {}: the logits pick class {}, the CPU reference's class {}", row_noun,
                    *compared.argmax_differs + 1, compared.argmax, compared.reference_argmax),
        "logits");
  } else if (!(compared.max_relative_error <= threshold)) {
    fail_comparison(
        row,
        fmt::format("{} {}: the logits are {:.3g} away from the CPU reference's "
                    "(relative error), above the {} threshold {:g}",
                    row_noun, compared.worst + 1, compared.max_relative_error, dtype, threshold),
        "logits");
  } else {
    row.result = VerdictResult::kPass;
  }
  return ok_status();
}

//! A text-to-image task: the run's image against the reference's, and neither blank nor NaN.
Status compare_image_with_reference(const fs::path& run_dir, const run::RunReport& report,
                                    const verify::Reference& reference, const std::string& dtype,
                                    dataset::VerdictRow& row) {
  row.verification = std::string(verify::kVerificationReference);
  CANRUN_ASSIGN_OR_RETURN(const fs::path file, run_file(run_dir, report.outputs_file, "outputs"));
  CANRUN_ASSIGN_OR_RETURN(const verify::Tensor got, verify::read_tensor(file, "image"));
  CANRUN_ASSIGN_OR_RETURN(const verify::Tensor expected,
                          verify::read_tensor(reference.outputs_file, "image"));
  const verify::ImageComparison compared = verify::compare_images(got, expected);
  const verify::ImageThresholds thresholds = verify::image_thresholds(dtype);
  const std::string size =
      got.shape.size() == 3 ? fmt::format("{}×{}", got.shape[1], got.shape[0]) : "no";
  row.output_text = fmt::format(
      "{} image; against the CPU reference PSNR {:.1f} dB (threshold {:g}), SSIM {:.4f} "
      "(threshold {:g}){}",
      size, compared.psnr_db, thresholds.min_psnr_db, compared.ssim, thresholds.min_ssim,
      report.throughput ? fmt::format("; {:.2f} {}", *report.throughput, report.throughput_unit)
                        : std::string());
  if (!compared.shape_error.empty()) {
    fail_comparison(
        row, fmt::format("the image does not match the CPU reference's: {}", compared.shape_error),
        "image");
  } else if (report.nan_values.value_or(0) > 0) {
    fail_comparison(row, fmt::format("the image holds {} NaN values", *report.nan_values), "image");
  } else if (compared.pixel_std < verify::kBlankPixelStd) {
    fail_comparison(
        row,
        fmt::format("the image is blank (pixel standard deviation {:.2f})", compared.pixel_std),
        "image");
  } else if (!(compared.psnr_db >= thresholds.min_psnr_db) ||
             !(compared.ssim >= thresholds.min_ssim)) {
    fail_comparison(row,
                    fmt::format("the image differs from the CPU reference's: PSNR {:.1f} dB "
                                "(threshold {:g}), SSIM {:.4f} (threshold {:g}) in {}",
                                compared.psnr_db, thresholds.min_psnr_db, compared.ssim,
                                thresholds.min_ssim, dtype),
                    "image");
  } else {
    row.result = VerdictResult::kPass;
  }
  return ok_status();
}

//! An embedding task: every embedding near the reference's (the dtype's cosine threshold), the
//! same nearest documents for each query; the embeddings encoded one at a time count too.
void compare_embeddings_with_reference(const run::RunReport& report,
                                       const verify::Reference& reference, const std::string& dtype,
                                       dataset::VerdictRow& row) {
  row.verification = std::string(verify::kVerificationReference);
  const double threshold = verify::embedding_cosine_threshold(dtype);
  const auto queries = static_cast<std::size_t>(std::max<std::int64_t>(0, reference.queries));
  const verify::EmbeddingComparison batched =
      verify::compare_embeddings(report.embeddings, reference.embeddings, queries);
  const verify::EmbeddingComparison alone =
      verify::compare_embeddings(report.embeddings_one_at_a_time, reference.embeddings, queries);
  const bool batched_worse = !batched.shape_error.empty() || batched.min_cosine < alone.min_cosine;
  const verify::EmbeddingComparison& worst = batched_worse ? batched : alone;
  const char* how = batched_worse ? "encoded in batches" : "encoded one at a time";
  std::string summary = fmt::format(
      "{} sentences, {}-dimensional embeddings; lowest cosine similarity with the CPU "
      "reference {:.6f} (threshold {})",
      reference.embeddings.size(),
      reference.embeddings.empty() ? 0 : reference.embeddings[0].size(),
      worst.shape_error.empty() ? worst.min_cosine : 0.0, threshold);
  if (report.throughput) {
    summary += fmt::format("; {:.1f} {}", *report.throughput, report.throughput_unit);
  }
  row.output_text = std::move(summary);
  std::string error;
  if (!worst.shape_error.empty()) {
    error = fmt::format("the embeddings {} do not match the CPU reference's: {}", how,
                        worst.shape_error);
  } else if (worst.min_cosine < threshold) {
    error = fmt::format(
        "sentence {}'s embedding ({}) has cosine similarity {:.6f} with the CPU reference's, "
        "below the {} threshold {}",
        worst.worst + 1, how, worst.min_cosine, dtype, threshold);
  } else if (const auto& differs =
                 batched.query_differs ? batched.query_differs : alone.query_differs) {
    error = fmt::format("query {}'s nearest {} documents are not the CPU reference's, in its order",
                        *differs + 1, verify::kNeighboursCompared);
  }
  if (error.empty()) {
    row.result = VerdictResult::kPass;
    return;
  }
  row.result = VerdictResult::kFailMismatch;
  row.error = std::move(error);
  row.error_signature = "FAIL_MISMATCH | embeddings differ from the CPU reference";
}

//! Packages on top (run/packages_on_top.h): a load failure naming missing modules of the
//! reviewed map gets them installed into an overlay, recorded in the row, and the run is tried
//! once more with it (the first attempt's output kept as stdout.first.txt/stderr.first.txt).
//! Nothing retried: nullopt, with the failure's error saying why when there is something to say.
Result<std::optional<run::ScriptRun>> retry_with_packages(
    const PreparedTrial& trial, const stack::StackPython& python, const std::string& error,
    TrialOutcome& outcome, run::ScriptPlace& place, run::Classification& failure,
    std::map<std::string, std::string>& env, process::ProcessLauncher& launcher) {
  const run::PackageRequest wanted = run::packages_for(error);
  std::string note;
  if (!wanted.unreviewed.empty()) {
    note = fmt::format("canrun does not install {} on top of the stack: not a reviewed package",
                       fmt::join(wanted.unreviewed, ", "));
  }
  std::optional<run::ScriptRun> retried;
  if (!wanted.distributions.empty()) {
    const fs::path overlays = trial.cache_dir / "overlays";
    auto overlay = run::install_what_can_be_had(python, wanted.distributions, overlays);
    if (overlay.ok()) {
      log::info("retrying {} with {} on top of the stack", trial.checkpoint.model_id,
                fmt::join(overlay->packages, " "));
      for (const char* name : {"stdout", "stderr"}) {
        std::error_code ignored;
        fs::rename(outcome.run_dir / fmt::format("{}.txt", name),
                   outcome.run_dir / fmt::format("{}.first.txt", name), ignored);
      }
      place.python_path = {overlay->site};
      outcome.row.packages = overlay->packages;
      for (auto& [name, value] : run::script_environment(trial.profile, place)) env[name] = value;
      CANRUN_ASSIGN_OR_RETURN(retried, run::run_script(trial.script, outcome.run_dir, trial.python,
                                                       env, trial.request.timeout, launcher));
    } else {
      note = fmt::format("installing {} on top of the stack failed: {}",
                         fmt::join(wanted.distributions, ", "), overlay.error().message());
    }
  }
  if (!retried && !note.empty()) failure.error += fmt::format("\n[canrun: {}]", note);
  return retried;
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

Result<TrialPlan> plan_trial(const Checkpoint& checkpoint, const backend::BackendProfile& profile,
                             const stack::StackPython& python, const std::string& library_version,
                             const std::optional<PlanOverride>& plan_override) {
  TrialPlan out;
  if (checkpoint.no_safetensors) {
    out.exclusion = "no_safetensors";
    out.why = checkpoint.no_safetensors->message();
    return out;
  }
  // Never run a pipeline's foreign code: diffusers before 0.36 imports a component's module
  // from the repo without being asked.
  if (const hub::ModelFacts& facts = checkpoint.facts; !facts.foreign_components.empty()) {
    out.exclusion = facts.foreign_components_in_repo ? "remote_code" : "incompatible";
    out.why =
        hub::foreign_components_why(facts.foreign_components, facts.foreign_components_in_repo);
    return out;
  }
  if (plan_override) {
    out.cores = plan_override->cores;
    out.parallelism = plan_override->parallelism;
    return out;
  }
  // Weights that hold no tensors are not planned: the model runs on one core, and its run
  // says what is wrong with it.
  if (checkpoint.facts.weights_bytes == 0) return out;
  CANRUN_ASSIGN_OR_RETURN(
      plan::StackPlan stack_plan,
      plan::plan_on_stack(checkpoint.facts, python, library_version, profile.topology));
  const plan::PlannedShards& shards = stack_plan.shards;
  if (shards.placed) {
    out.cores = shards.cores;
    out.parallelism = std::string(plan::to_string(shards.parallelism));
  } else {
    out.exclusion = shards.exclusion;
    out.why = shards.why;
  }
  out.stack_plan = std::move(stack_plan);
  return out;
}

Result<PreparedTrial> prepare_trial(const TrialRequest& request, process::ProcessLauncher& launcher,
                                    std::string library_version) {
  CANRUN_ASSIGN_OR_RETURN(backend::BackendProfile profile, trial_profile(request));
  const stack::StackPython python(request.python, absolute_cache_dir(request) / "stack", launcher);
  CANRUN_ASSIGN_OR_RETURN(Checkpoint checkpoint,
                          resolve_checkpoint({request.model, request.revision, std::nullopt}));
  if (library_version.empty()) {
    CANRUN_ASSIGN_OR_RETURN(library_version, stack::probe_library_version(python));
  }
  CANRUN_ASSIGN_OR_RETURN(TrialPlan plan, plan_trial(checkpoint, profile, python, library_version,
                                                     request.plan_override));
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
  const task::TaskSpec* spec = task::find_task(request.task);
  const bool needs_ranks =
      trial.plan.exclusion ? *trial.plan.exclusion == "no_parallel_plan" : trial.plan.cores > 1;
  if (spec != nullptr && !spec->shards && needs_ranks) {
    if (request.plan_override) {
      return invalid_argument(fmt::format("--cores {}: the {} recipe runs on one core only",
                                          trial.plan.cores, spec->name));
    }
    // Why in the planner's own figures, without its search for a parallel plan this recipe
    // could not use anyway.
    const plan::PlannedShards& shards = trial.plan.stack_plan->shards;
    trial.plan.exclusion = "too_large";
    trial.plan.why = fmt::format(
        "{} of weights need more than one core ({} per core); the {} recipe runs on one core "
        "only",
        plan::gib(static_cast<double>(shards.weights_bytes)),
        plan::gib(static_cast<double>(shards.budget_bytes)), spec->name);
  }
  recipe::RecipeRequest& recipe = trial.recipe;
  recipe.model = trial.checkpoint.load_from;
  recipe.model_id = trial.checkpoint.model_id;
  recipe.revision = trial.checkpoint.revision;
  recipe.task = request.task;
  recipe.prompt = request.prompt.empty() ? recipe::default_prompt(request.task) : request.prompt;
  recipe.new_tokens = request.new_tokens;
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
  const verify::ReferenceStore references(trial.cache_dir / "references");
  const verify::ReferenceKey key{model_id,
                                 trial.checkpoint.revision,
                                 trial.request.task,
                                 trial.recipe.prompt,
                                 trial.request.new_tokens,
                                 trial.profile.dtype,
                                 reference_library_version(trial)};
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

  CANRUN_ASSIGN_OR_RETURN(backend::BackendProfile reference_profile,
                          backend::find_profile(trial.request.reference_backend));
  reference_profile.dtype = trial.profile.dtype;
  recipe::RecipeRequest reference_request = trial.recipe;
  reference_request.cores = 1;  // the reference runs on one core, unsharded
  reference_request.parallelism = "none";
  CANRUN_ASSIGN_OR_RETURN(std::string reference_script,
                          recipe::render_recipe(reference_request, reference_profile));
  if (comparison_of(trial) == task::Comparison::kTokens) {
    log::info("running the CPU reference of {} ({} tokens)", model_id, trial.request.new_tokens);
  } else {
    log::info("running the CPU reference of {} ({})", model_id, trial.request.task);
  }
  CANRUN_ASSIGN_OR_RETURN(out.run_dir,
                          run::make_run_dir(trial.cache_dir / "runs", model_id, "reference"));
  const run::ScriptPlace place{trial.cache_dir,
                               trial.stack ? trial.stack->compiler_version : "",
                               {first_core, 1},
                               std::nullopt,
                               trial.checkpoint.in_hf_cache(),
                               python_path};
  CANRUN_ASSIGN_OR_RETURN(run::ScriptRun ref_run,
                          run::run_script(reference_script, out.run_dir, trial.python,
                                          run::script_environment(reference_profile, place),
                                          trial.request.timeout, launcher));
  if (auto failure = run::classify(ref_run.outcome, ref_run.report)) {
    out.failure = std::move(failure);
    return out;
  }
  out.reference = verify::Reference{ref_run.report->tokens,
                                    ref_run.report->text,
                                    ref_run.report->embeddings,
                                    ref_run.report->queries,
                                    {},
                                    {}};
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
  if (trial.plan.exclusion) {  // nothing to run
    row.result = VerdictResult::kExcluded;
    row.exclusion_reason = *trial.plan.exclusion;
    row.error = trial.plan.why;
    return device;
  }
  CANRUN_RETURN_IF_ERROR(require_local_files(trial.checkpoint));
  if (placement.cores.count != trial.plan.cores) {
    return invalid_argument(fmt::format("placed on {} cores, but the plan needs {}",
                                        placement.cores.count, trial.plan.cores));
  }
  const std::string& model_id = trial.checkpoint.model_id;
  run::ScriptPlace& place = device.place;
  place = {trial.cache_dir,   stack.compiler_version,         placement.cores,
           placement.pinning, trial.checkpoint.in_hf_cache(), {}};

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
  if (device.reference && device.reference->reference &&
      !device.reference->reference->tokens.empty()) {
    const fs::path tokens_file = outcome.run_dir / "reference.json";
    CANRUN_RETURN_IF_ERROR(write_file_atomically(
        tokens_file, nlohmann::json{{"tokens", device.reference->reference->tokens}}.dump()));
    env[std::string(run::kReferenceTokensVariable)] = tokens_file.string();
  }
  CANRUN_ASSIGN_OR_RETURN(run::ScriptRun backend_run,
                          run::run_script(trial.script, outcome.run_dir, trial.python, env,
                                          trial.request.timeout, launcher));
  record_measurements(backend_run, outcome);
  auto failure = run::classify(backend_run.outcome, backend_run.report);
  if (failure && failure->result == VerdictResult::kFailLoad && backend_run.report) {
    CANRUN_ASSIGN_OR_RETURN(std::optional<run::ScriptRun> retried,
                            retry_with_packages(trial, python, backend_run.report->error, outcome,
                                                place, *failure, env, launcher));
    if (retried) {
      backend_run = std::move(*retried);
      record_measurements(backend_run, outcome);
      failure = run::classify(backend_run.outcome, backend_run.report);
    }
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
  if (found->failure && cores > 1) {
    log::warning(
        "the CPU reference of {} failed ({}), so match_tokens and agreement are not "
        "known: {}",
        model_id, to_string(found->failure->result), (found->run_dir / "run.py").string());
  } else if (found->failure) {
    row.result = VerdictResult::kReferenceFail;
    row.error = fmt::format(
        "the CPU reference failed ({}), so there is no verdict on the backend ({}):\n{}",
        to_string(found->failure->result), (found->run_dir / "run.py").string(),
        found->failure->error);
    row.error_signature = "REFERENCE_FAIL | " + found->failure->signature;
    return outcome;
  }
  // The agreement counts only when it was measured against this very reference.
  if (found->reference && report.agreement) row.agreement = report.agreement;

  // Verify.
  if (cores > 1) {
    run::RunReport measured = report;
    if (!row.agreement) measured.agreement.reset();
    CANRUN_RETURN_IF_ERROR(judge_sharded_run(trial, measured, found->reference, launcher, row));
  } else {
    switch (comparison_of(trial)) {
      case task::Comparison::kTokens:
        compare_with_reference(report, *found->reference, row);
        break;
      case task::Comparison::kEmbeddings:
        compare_embeddings_with_reference(report, *found->reference, trial.profile.dtype, row);
        break;
      case task::Comparison::kLogits:
        CANRUN_RETURN_IF_ERROR(
            compare_logits_with_reference(*task::find_task(trial.request.task), outcome.run_dir,
                                          report, *found->reference, trial.profile.dtype, row));
        break;
      case task::Comparison::kImage:
        CANRUN_RETURN_IF_ERROR(compare_image_with_reference(
            outcome.run_dir, report, *found->reference, trial.profile.dtype, row));
        break;
    }
  }
  if (!report.image_file.empty()) {  // the images the Space shows side by side
    if (auto image = run_file(outcome.run_dir, report.image_file, "image"); image.ok())
      outcome.images["image"] = *image;
    if (found->reference && !found->reference->image_file.empty())
      outcome.images["reference_image"] = found->reference->image_file;
    CANRUN_RETURN_IF_ERROR(dataset::name_output_files(row, outcome.images));
  }
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
