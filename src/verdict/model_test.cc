#include "verdict/model_test.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <thread>

#include "backend/profile.h"
#include "core/atomic_file.h"
#include "core/cache_dir.h"
#include "core/log.h"
#include "core/model_id.h"
#include "core/text.h"
#include "core/version.h"
#include "hub/checkpoint_files.h"
#include "hub/facts_reader.h"
#include "plan/stack_plan.h"
#include "recipe/renderer.h"
#include "run/classify.h"
#include "run/model_source.h"
#include "run/result_line.h"
#include "run/stack.h"
#include "verify/reference_store.h"

namespace canrun::verdict {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::system_clock;

std::string host_name() {
  char name[256] = {};
  return ::gethostname(name, sizeof name - 1) == 0 ? name : "";
}

//! A fresh folder for one run: <work>/<model id with / as __>-<backend>-<time>-<pid>-<n>.
Result<fs::path> make_run_dir(const fs::path& work_dir, std::string_view model_id,
                              std::string_view what) {
  static std::atomic<int> counter{0};
  std::string name(model_id);
  for (char& c : name) c = c == '/' ? '_' : c;
  const auto stamp =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch())
          .count();
  const fs::path dir =
      work_dir / fmt::format("{}-{}-{}-{}-{}", name, what, stamp, ::getpid(), counter++);
  std::error_code error;
  fs::create_directories(dir, error);
  if (error)
    return io_error(fmt::format("cannot create run folder {}: {}", dir.string(), error.message()));
  return dir;
}

//! The environment of a run: ours, plus what the profile and the test need.
std::map<std::string, std::string> run_environment(const backend::BackendProfile& profile,
                                                   const run::Stack& stack,
                                                   const run::ModelSource& source,
                                                   const fs::path& cache_dir, int cores) {
  auto env = run::current_environment();
  env["PYTHONUNBUFFERED"] = "1";
  env["TOKENIZERS_PARALLELISM"] = "false";
  if (source.from_hf_cache) env["HF_HUB_OFFLINE"] = "1";
  if (!profile.cache_env.empty()) {
    env[profile.cache_env] = (cache_dir / "compile" / profile.name /
                              fmt::format("{}-{}", profile.compiler, stack.compiler_version))
                                 .string();
  }
  // The first `cores` cores (a campaign assigns others); run.py gives each rank its share.
  // Threads ("count") are left to the host: the ranks share them.
  if (profile.pinning_syntax == "range")
    env[profile.pinning_env] = cores == 1 ? "0" : fmt::format("0-{}", cores - 1);
  if (profile.pinning_syntax == "list") {
    std::string list;
    for (int core = 0; core < cores; ++core) list += fmt::format("{}{}", core ? "," : "", core);
    env[profile.pinning_env] = list;
  }
  const std::string profile_dir = profile.source.parent_path().string();
  for (const auto& [key, value] : profile.env) {
    std::string expanded = value;
    for (auto at = expanded.find("{profile_dir}"); at != std::string::npos;
         at = expanded.find("{profile_dir}")) {
      expanded.replace(at, std::string_view("{profile_dir}").size(), profile_dir);
    }
    env[key] = expanded;
  }
  return env;
}

struct ScriptRun {
  run::ProcessOutcome outcome;
  std::optional<run::RunReport> report;
};

Result<ScriptRun> run_script(const std::string& script, const fs::path& dir,
                             const std::string& python, std::map<std::string, std::string> env,
                             std::chrono::seconds timeout, run::ProcessLauncher& launcher) {
  CANRUN_RETURN_IF_ERROR(write_file_atomically(dir / "run.py", script));
  run::ProcessSpec spec;
  spec.argv = {python, "run.py"};
  spec.env = std::move(env);
  spec.cwd = dir;
  spec.timeout = timeout;
  CANRUN_ASSIGN_OR_RETURN(run::ProcessOutcome outcome, launcher.run(spec));
  // Keep what it printed beside the script, for whoever looks into a failure.
  (void)write_file_atomically(dir / "stdout.txt", outcome.stdout_tail);
  (void)write_file_atomically(dir / "stderr.txt", outcome.stderr_tail);
  auto report = run::parse_result_line(outcome.stdout_tail);
  ScriptRun result{std::move(outcome), std::nullopt};
  if (report.ok()) {
    result.report = std::move(*report);
  } else {
    log::warning("{}: {}", dir.string(), report.error().message());
  }
  return result;
}

//! The plan for this test: the profile's topology, with the request's memory overrides. A
//! checkpoint without safetensors weights is not placed (excluded as no_safetensors, as the
//! ranking excludes it); one whose weights hold no tensors is not planned (it runs on one
//! core, and its run says what is wrong with it).
Result<std::optional<plan::StackPlan>> plan_test(const TestRequest& request,
                                                 backend::BackendProfile& profile,
                                                 const run::ModelSource& source,
                                                 const run::Stack& stack, const std::string& python,
                                                 const fs::path& cache_dir,
                                                 run::ProcessLauncher& launcher) {
  CANRUN_RETURN_IF_ERROR(
      backend::override_memory(profile.topology, request.memory_per_core_gib, request.reserve_gib));
  std::optional<ModelId> id;
  if (auto parsed = ModelId::parse(source.model_id); parsed.ok()) id = *parsed;
  auto read = hub::local_model_facts(source.folder, id);
  if (!read.ok() && read.error().has_reason(reason::kNoSafetensors)) {
    plan::StackPlan excluded;
    excluded.shards.exclusion = "no_safetensors";
    excluded.shards.why = read.error().message();
    return std::optional<plan::StackPlan>(std::move(excluded));
  }
  if (!read.ok()) return read.error();
  hub::ModelFacts facts = std::move(read).value();
  if (facts.weights_bytes == 0) return std::optional<plan::StackPlan>();
  if (facts.model_id.empty()) facts.model_id = source.model_id;
  CANRUN_ASSIGN_OR_RETURN(plan::StackPlan plan,
                          plan::plan_on_stack(facts, python, stack.library_version,
                                              profile.topology, cache_dir / "probes", launcher));
  return std::optional<plan::StackPlan>(std::move(plan));
}

//! A sharded run that generated tokens: match_tokens against the reference when there is one
//! (information), and the judge's verdict on the text.
Status judge_sharded_run(const TestRequest& request, const std::string& python,
                         const run::Stack& stack, const fs::path& cache_dir,
                         const recipe::RecipeRequest& recipe_request, const run::RunReport& report,
                         const std::optional<verify::Reference>& reference,
                         run::ProcessLauncher& launcher, dataset::VerdictRow& row) {
  if (reference)
    row.match_tokens = verify::compare_tokens(report.tokens, reference->tokens).match_tokens;
  judge::Judge::Options options;
  options.model = request.judge_model;
  options.python = python;
  options.library_version = stack.library_version;
  options.cache_dir = cache_dir;
  CANRUN_ASSIGN_OR_RETURN(judge::Judge judge, judge::Judge::open(options, launcher));
  log::info("asking the judge {} whether the output is fluent English", judge.name());
  CANRUN_ASSIGN_OR_RETURN(judge::Judgement judgement,
                          judge.judge({recipe_request.prompt, report.text}));
  row.verification = "judge";
  row.judge_score = judgement.score;
  row.judge_threshold = judgement.threshold;
  row.judge_model = judgement.judge;
  if (judgement.fluent) {
    row.result = VerdictResult::kPass;
  } else {
    row.result = VerdictResult::kFailJudge;
    row.error = fmt::format(
        "the judge {} scored the text {:.3f}, below its threshold {:.3f}: not fluent English\n"
        "got: {}",
        judgement.judge, judgement.score, judgement.threshold, report.text);
    row.error_signature = "FAIL_JUDGE";
  }
  return ok_status();
}

}  // namespace

Result<TestOutcome> run_model_test(const TestRequest& request, run::ProcessLauncher& launcher) {
  CANRUN_ASSIGN_OR_RETURN(backend::BackendProfile profile, backend::find_profile(request.backend));
  CANRUN_ASSIGN_OR_RETURN(backend::BackendProfile reference_profile,
                          backend::find_profile(request.reference_backend));
  reference_profile.dtype = profile.dtype;  // the reference runs in the tested dtype
  CANRUN_ASSIGN_OR_RETURN(run::ModelSource source,
                          run::resolve_model(request.model, request.revision));
  const std::string python = request.python.empty() ? run::default_python() : request.python;
  CANRUN_ASSIGN_OR_RETURN(run::Stack stack, run::probe_stack(python, profile, launcher));
  // Absolute: run.py runs in its own folder, and reads the compile cache's path from its env.
  const fs::path cache_dir =
      fs::absolute(request.cache_dir.empty() ? default_cache_dir() : request.cache_dir);
  const fs::path work_dir =
      request.work_dir.empty() ? cache_dir / "runs" : fs::absolute(request.work_dir);
  CANRUN_ASSIGN_OR_RETURN(std::optional<plan::StackPlan> plan,
                          plan_test(request, profile, source, stack, python, cache_dir, launcher));
  const int cores = plan && plan->shards.placed ? plan->shards.cores : 1;

  recipe::RecipeRequest recipe_request;
  recipe_request.model = source.load_from;
  recipe_request.model_id = source.model_id;
  recipe_request.revision = source.revision;
  recipe_request.task = request.task;
  recipe_request.prompt =
      request.prompt.empty() ? recipe::default_prompt(request.task) : request.prompt;
  recipe_request.new_tokens = request.new_tokens;
  recipe_request.cores = cores;
  if (plan && plan->shards.placed)
    recipe_request.parallelism = std::string(plan::to_string(plan->shards.parallelism));
  CANRUN_ASSIGN_OR_RETURN(std::string script, recipe::render_recipe(recipe_request, profile));
  recipe::RecipeRequest reference_request = recipe_request;
  reference_request.cores = 1;  // the reference runs on one core, unsharded
  reference_request.parallelism = "none";
  CANRUN_ASSIGN_OR_RETURN(std::string reference_script,
                          recipe::render_recipe(reference_request, reference_profile));

  TestOutcome outcome;
  dataset::VerdictRow& row = outcome.row;
  row.model_id = source.model_id;
  row.revision = source.commit;
  row.task = request.task;
  row.backend = profile.name;
  row.device = profile.device;
  row.compiler = profile.compiler;
  row.compiler_version = stack.compiler_version;
  row.library = "transformers";
  row.library_version = stack.library_version;
  row.cores = cores;
  row.parallelism = recipe_request.parallelism;
  if (plan) row.weights_bytes = static_cast<std::int64_t>(plan->shards.weights_bytes);
  row.stack = stack.versions_json();
  row.packages = stack.packages();
  row.run_py = script;
  row.started_at = std::chrono::time_point_cast<std::chrono::microseconds>(Clock::now());
  row.host = host_name();
  row.canrun_version = kCanrunVersion;

  if (plan && !plan->shards.placed) {  // nothing to run: no allowed degree holds it
    row.result = VerdictResult::kExcluded;
    row.exclusion_reason = plan->shards.exclusion;
    row.cores.reset();
    row.parallelism.reset();
    row.error = plan->shards.why;
    return outcome;
  }

  // 1. The backend. A failure here is the verdict: no reference is needed for it.
  log::info("running {} on {}", source.model_id, profile.name);
  CANRUN_ASSIGN_OR_RETURN(outcome.run_dir, make_run_dir(work_dir, source.model_id, profile.name));
  CANRUN_ASSIGN_OR_RETURN(ScriptRun backend_run,
                          run_script(script, outcome.run_dir, python,
                                     run_environment(profile, stack, source, cache_dir, cores),
                                     request.timeout, launcher));
  outcome.stdout_bytes = backend_run.outcome.stdout_bytes;
  row.runtime_s = backend_run.outcome.wall_s;
  if (const auto& report = backend_run.report) {
    row.load_s = report->load_s;
    row.compile_s = report->compile_s;
    row.generate_s = report->generate_s;
    row.ttft_s = report->ttft_s;
    row.decode_tokens_per_s = report->decode_tokens_per_s;
    row.peak_device_memory_bytes = report->peak_device_memory_bytes;
  }
  if (auto failure = run::classify(backend_run.outcome, backend_run.report)) {
    row.result = failure->result;
    row.error = failure->error;
    row.error_signature = failure->signature;
    return outcome;
  }
  const run::RunReport& report = *backend_run.report;
  row.new_tokens = static_cast<std::int32_t>(report.tokens.size());
  row.output_text = report.text;

  // 2. The CPU reference, once per key.
  const verify::ReferenceStore references(cache_dir / "references");
  const verify::ReferenceKey key{source.model_id,    source.revision, recipe_request.prompt,
                                 request.new_tokens, profile.dtype,   stack.library_version};
  std::optional<verify::Reference> reference = references.find(key);
  outcome.reference_reused = reference.has_value();
  if (!reference) {
    log::info("running the CPU reference of {} ({} tokens)", source.model_id, request.new_tokens);
    CANRUN_ASSIGN_OR_RETURN(fs::path ref_dir, make_run_dir(work_dir, source.model_id, "reference"));
    CANRUN_ASSIGN_OR_RETURN(ScriptRun ref_run, run_script(reference_script, ref_dir, python,
                                                          run_environment(reference_profile, stack,
                                                                          source, cache_dir, 1),
                                                          request.timeout, launcher));
    if (auto failure = run::classify(ref_run.outcome, ref_run.report); failure && cores > 1) {
      log::warning("the CPU reference of {} failed ({}), so match_tokens is not known: {}",
                   source.model_id, to_string(failure->result), (ref_dir / "run.py").string());
    } else if (failure) {
      row.result = VerdictResult::kReferenceFail;
      row.error = fmt::format(
          "the CPU reference failed ({}), so there is no verdict on the backend ({}):\n{}",
          to_string(failure->result), (ref_dir / "run.py").string(), failure->error);
      row.error_signature = "REFERENCE_FAIL | " + failure->signature;
      return outcome;
    } else {
      reference = verify::Reference{ref_run.report->tokens, ref_run.report->text};
      if (auto saved = references.save(key, *reference); !saved.ok())
        log::warning("{}", saved.error().message());
    }
  }
  if (cores > 1) {
    CANRUN_RETURN_IF_ERROR(judge_sharded_run(request, python, stack, cache_dir, recipe_request,
                                             report, reference, launcher, row));
    return outcome;
  }

  // 3. Verify against the reference.
  row.verification = "reference";
  const verify::TokenMatch match = verify::compare_tokens(report.tokens, reference->tokens);
  row.match_tokens = match.match_tokens;
  if (match.identical) {
    row.result = VerdictResult::kPass;
  } else {
    row.result = VerdictResult::kFailMismatch;
    row.error =
        fmt::format("token {} of {} differs from the CPU reference\nreference: {}\ngot:       {}",
                    match.match_tokens + 1, reference->tokens.size(), reference->text, report.text);
    row.error_signature = "FAIL_MISMATCH";
  }
  return outcome;
}

}  // namespace canrun::verdict
