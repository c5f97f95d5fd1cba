// One trial: one model, one task, one stack — the unit of work canrun test runs and a campaign
// schedules (SPEC.md §5-§7). Its steps, each a function of its own:
//
//   resolve   MODEL → the checkpoint and its facts (trial/checkpoint.h; one rule everywhere);
//             the task, when not given, is the model's (trial/exclusion.h: task_of_model)
//   exclude   what a campaign excludes, by the same rule (trial/exclusion.h): curated, gated,
//             remote_code, incompatible, unsupported_task, quantized, no_safetensors —
//             EXCLUDED, nothing runs
//   plan      the fewest cores that hold the weights, with the parallel plan the stack's
//             transformers offers (or the --cores/--parallelism override, which skips planning);
//             no allowed degree: EXCLUDED (too_large, no_parallel_plan), nothing runs
//   render    run.py for the plan (prepare_trial: what canrun render prints, byte for byte)
//   run       run.py under supervision on the cores it is placed on, in its run folder
//   classify  how it ended: a failure of the backend run is the verdict; a load failure naming
//             a missing module of the reviewed map is retried once with it on top
//             (run/packages_on_top.h)
//   reference the CPU reference's tokens (computed once per key and shared), BEFORE the run:
//             run.py is given them and, after generating, feeds them back one at a time through
//             its compiled decode step (teacher-forced) and reports the share of positions
//             where its own argmax was the reference's next token: `agreement`
//   verify    (verify/verification.h) one core: the tokens must equal the reference's
//             (agreement recorded as information); sharded: the judge must find the text
//             fluent and, where the reference exists, agreement must reach
//             verify::kAgreementThreshold (below it: FAIL_MISMATCH; match_tokens recorded as
//             information; with agreement_decides, the census's random weights, the agreement
//             alone). A one-core run that worked but whose reference failed is REFERENCE_FAIL;
//             a judge that cannot run is an error, not a verdict.
//
// Reference is host work of its own (reference_for), run and classify are the device stage
// (run_on_device: it needs the cores), verify is the host stage (verify_on_host: host CPUs and
// memory only), so a campaign holds the cores only for the run. Inside src/trial, the verify
// step's rules are trial/verdict_rules.h, the row's assembly trial/row_assembly.h, and the
// retry with packages on top trial/packages_retry.h.
//
// Thread safety: run_trial may be called from several threads at once provided each call has
// its own run folder and cores; the reference store and the compile caches are safe to share.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "backend/pinning.h"
#include "backend/profile.h"
#include "core/result.h"
#include "dataset/verdict_row.h"
#include "judge/judge.h"
#include "plan/stack_plan.h"
#include "process/process.h"
#include "recipe/renderer.h"
#include "run/classify.h"
#include "run/result_line.h"
#include "run/script_run.h"
#include "stack/stack.h"
#include "trial/checkpoint.h"
#include "verify/reference_store.h"

namespace canrun::trial {

//! --cores/--parallelism: the placement typed by hand, instead of planning.
struct PlanOverride {
  int cores = 1;
  //! None: the parallelism the stack offers at `cores` (plan::plan_at_degree), or the
  //! exclusion no_parallel_plan when it offers none.
  std::optional<Parallelism> parallelism;
};

//! The shipped profile of the CPU reference (backends/reference.toml).
inline constexpr std::string_view kReferenceBackend = "reference";

//! What to try, as canrun test, plan and render take it.
struct TrialRequest {
  std::string model;  //!< Hub id or local folder
  std::string revision = "main";
  std::string task;  //!< a Hub pipeline tag with a recipe; empty: the model's (task_of_model)
  std::string backend = "cpu";                       //!< profile name or .toml path
  std::string reference_backend{kReferenceBackend};  //!< the CPU reference's profile
  std::string prompt;                                //!< empty: the task's
  int new_tokens = recipe::kDefaultNewTokens;
  //! --long-tokens: generated after the check by the tasks with a long generation; 0: none.
  int long_tokens = recipe::kDefaultLongTokens;
  //! The eager baseline before the compiled run (--no-perf: false; the census runs without).
  bool perf = true;
  std::chrono::seconds timeout{1800};  //!< per run (the reference and the test each)
  std::string python;                  //!< the stack's Python; empty: stack::default_python()
  //! References, compile caches, stack answers; empty: canrun::default_cache_dir().
  std::filesystem::path cache_dir;
  double memory_per_core_gib = 0;  //!< > 0: instead of the profile's (plans more cores)
  double reserve_gib = -1;         //!< >= 0: instead of the profile's
  std::optional<PlanOverride> plan_override;
  std::string judge_model = std::string(judge::kDefaultJudgeModel);  //!< for sharded runs
  //! Sharded text generation of random weights (the census), which writes no English: no
  //! judge; the teacher-forced agreement with the CPU reference decides (REFERENCE_FAIL
  //! without one).
  bool agreement_decides = false;
  //! The curated exclusions (catalog/exclusions.toml) prepare_trial screens the model by, as a
  //! campaign screens its own; empty: none.
  std::filesystem::path exclusions_file;
};

//! Where a scheduler puts a trial: the cores it may use and its run folder.
struct Placement {
  backend::CoreRange cores;  //!< `count` must be the plan's cores; first: where they start
  //! The value of the profile's pinning variable, when the scheduler computed it (cores that are
  //! not one range; a thread count on a `count` profile); empty: backend::pinning_value(cores).
  std::optional<std::string> pinning;
  std::filesystem::path run_dir;  //!< empty: a fresh folder under <cache>/runs
};

//! The plan step's answer.
struct TrialPlan {
  std::optional<plan::StackPlan> stack_plan;  //!< none: overridden, or weights not known
  int cores = 1;
  Parallelism parallelism = Parallelism::kNone;
  std::optional<std::string> exclusion;  //!< a reason of trial/exclusion.h
  std::string why;                       //!< of the exclusion (without the reason)
};

//! Everything decided before anything runs.
struct PreparedTrial {
  TrialRequest request;             //!< its task the model's when none was asked for
  backend::BackendProfile profile;  //!< with the request's memory overrides
  std::filesystem::path cache_dir;  //!< absolute
  std::string python;
  Checkpoint checkpoint;
  std::string library_version;        //!< transformers of the stack's Python
  std::optional<stack::Stack> stack;  //!< every version; asked before running when absent
  TrialPlan plan;
  recipe::RecipeRequest recipe;
  std::string script;  //!< run.py; empty when excluded
};

struct TrialOutcome {
  dataset::VerdictRow row;
  bool reference_reused = false;
  std::filesystem::path run_dir;  //!< holds run.py, stdout.txt, stderr.txt
  std::size_t stdout_bytes = 0;   //!< what the run printed in all (only the tail is kept)
  //! The run's compile cache hits and misses, when its backend counts them.
  std::optional<run::CompileCacheCounts> compile_cache;
  //! The task's output images by role ("image", "reference_image"), for the dataset's images/.
  std::map<std::string, std::filesystem::path> images;
};

//! The profile, with the request's memory overrides.
Result<backend::BackendProfile> trial_profile(const TrialRequest& request);

//! The request's cache folder, absolute (default_cache_dir() when not given).
std::filesystem::path absolute_cache_dir(const TrialRequest& request);

//! The plan step: the checkpoint's exclusion (checkpoint_exclusion), else the override, or the
//! planner on the checkpoint's facts and the stack's parallel support (asked of `python`,
//! cached); a plan of several cores for a task whose recipe runs on one core only is too_large.
Result<TrialPlan> plan_trial(const Checkpoint& checkpoint, std::string_view task,
                             const backend::BackendProfile& profile,
                             const stack::StackPython& python, const std::string& library_version,
                             const std::optional<PlanOverride>& plan_override);

//! Screen, resolve, plan and render, as a campaign would (trial/exclusion.h): a model excluded
//! is a PreparedTrial with plan.exclusion and no script, the task it was screened for in
//! request.task (the model's when none was given, said on stderr in one line; text-generation
//! when excluded before its checkpoint could say). kInvalidArgument for a task given that has
//! no recipe. `library_version` empty: asked of the stack's Python when there is a plan to make.
Result<PreparedTrial> prepare_trial(const TrialRequest& request, process::ProcessLauncher& launcher,
                                    std::string library_version = "");

//! The render step alone, for a checkpoint already resolved and planned (a campaign plans its
//! whole work list first): what prepare_trial returns after its own resolving and planning.
Result<PreparedTrial> prepare_planned(const TrialRequest& request, backend::BackendProfile profile,
                                      Checkpoint checkpoint, std::string library_version,
                                      TrialPlan plan);

//! The CPU reference of a trial, as the reference step found it.
struct TrialReference {
  std::optional<verify::Reference> reference;  //!< none: computing it failed (`failure`)
  std::optional<run::Classification> failure;  //!< how the reference run ended, when it failed
  std::filesystem::path run_dir;               //!< the run that computed it; empty: from the store
  bool reused = false;                         //!< found in the store
  //! The packages on top it ran with (a reference that failed to load is tried again with
  //! those the backend run learned).
  std::vector<std::filesystem::path> python_path;
};

//! The reference step: the CPU reference of the trial's key (model, revision, prompt, tokens,
//! dtype, library version), from the store or computed now — the same checkpoint, eager, on
//! one core (`first_core`), in the tested dtype — and stored. Once per key: a concurrent
//! computation of the same key is waited for, not repeated. A reference run that fails is an
//! answer (`failure`), not an error; an error means it could not be run at all.
Result<TrialReference> reference_for(const PreparedTrial& trial, int first_core,
                                     const std::vector<std::filesystem::path>& python_path,
                                     process::ProcessLauncher& launcher);

//! The device stage's answer: the row so far, and what the host stage verifies.
struct DeviceRun {
  TrialOutcome outcome;
  //! Set when the run generated: the host stage (comparison, judge) decides the verdict.
  //! Unset: the row is final (excluded, or the run failed).
  std::optional<run::RunReport> report;
  run::ScriptPlace place;  //!< where it ran, packages on top included (the reference uses them)
  //! The reference step's answer, when it ran before the device stage (run.py was then given
  //! the reference's tokens); none: the host stage computes it.
  std::optional<TrialReference> reference;
};

//! The device stage: run (learning packages on top once if the load needs them) and classify,
//! on the placement's cores. With a reference that has tokens, run.py is given them (in the run
//! folder, named by run::kReferenceTokensVariable) and measures its teacher-forced agreement.
//! A scheduler frees the cores after it.
Result<DeviceRun> run_on_device(const PreparedTrial& trial, const Placement& placement,
                                process::ProcessLauncher& launcher,
                                std::optional<TrialReference> reference = std::nullopt);

//! The host stage, for a DeviceRun with a report: the comparison with the reference, or the
//! judge and the agreement. It computes the reference itself (reference_for) only when the
//! device stage had none, or when the reference failed without the packages on top that the
//! run learned since.
Result<TrialOutcome> verify_on_host(const PreparedTrial& trial, DeviceRun device,
                                    process::ProcessLauncher& launcher);

//! A model that is not run: excluded before planning or running (curated, or by what its
//! checkpoint is), with the reason and why.
struct ExcludedModel {
  std::string model_id;
  std::optional<std::string> commit;  //!< when known
  std::string task;
  std::string reason;                          //!< an exclusion reason (dataset/verdict_row.h)
  std::string why;                             //!< in the row's error column
  std::optional<std::uint64_t> weights_bytes;  //!< when known
};

//! The row of an excluded model: its identity and the stack's columns as a run's row has them,
//! the result EXCLUDED with its reason; nothing runs.
dataset::VerdictRow excluded_row(const ExcludedModel& model, const backend::BackendProfile& profile,
                                 const stack::Stack& stack);

//! The row's model_type (the checkpoint's, else the plan's), and what the stack's transformers
//! claims for it (claims_fullgraph, claims_tp_plan, claims_ep_plan) when the plan asked the
//! stack about that type.
void record_model_type(std::optional<std::string> model_type,
                       const std::optional<plan::StackPlan>& stack_plan, dataset::VerdictRow& row);

//! Reference, run, classify and verify a prepared trial on its placement. A verdict, or an
//! error when it could not be run or verified (a stack without the compiler, files not on this
//! machine, a judge that failed) — those are not verdicts on the backend.
Result<TrialOutcome> run_prepared_trial(const PreparedTrial& trial, const Placement& placement,
                                        process::ProcessLauncher& launcher);

//! canrun test: the stack's versions, then prepare and run on cores from 0.
Result<TrialOutcome> run_trial(const TrialRequest& request, process::ProcessLauncher& launcher);

}  // namespace canrun::trial
