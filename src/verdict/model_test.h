// One test of one model on one backend, end to end (SPEC.md §5-§7): find the checkpoint, ask
// the stack for its versions, plan it onto the fewest cores that hold its weights (a model
// that no allowed degree holds is EXCLUDED, not run), render run.py, run it under supervision
// and classify how it ended; when it generated tokens, get the CPU reference (from the store,
// or by running the reference recipe once) and verify them: on one core the tokens must equal
// the reference's; sharded, the judge model must find the text fluent (match_tokens is then
// recorded as information). A failure of the backend run is its verdict whatever the reference
// would do (an architecture unknown to this transformers is FAIL_LOAD); REFERENCE_FAIL is for
// a one-core run that worked but whose reference could not be computed. A judge that fails is
// an error, not a verdict.
//
// Thread safety: run_model_test may be called from several threads at once (a campaign)
// provided each call has its own run folder; the reference store and compile caches are
// safe to share.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>

#include "core/result.h"
#include "dataset/verdict_row.h"
#include "judge/judge.h"
#include "run/process.h"

namespace canrun::verdict {

struct TestRequest {
  std::string model;  //!< Hub id (found in the HF cache) or a local folder
  std::string revision = "main";
  std::string task = "text-generation";
  std::string backend = "cpu";                  //!< profile name or .toml path
  std::string reference_backend = "reference";  //!< the CPU reference's profile
  std::string prompt;                           //!< empty: the recipe's default
  int new_tokens = 32;
  std::chrono::seconds timeout{1800};  //!< per run (the reference and the test each)
  std::string python;                  //!< the stack's Python; empty: run::default_python()
  std::filesystem::path
      cache_dir;  //!< references and compile caches; empty: canrun::default_cache_dir()
  std::filesystem::path work_dir;  //!< where run folders go; empty: cache_dir/runs
  double memory_per_core_gib = 0;  //!< > 0: instead of the profile's (plans more cores)
  double reserve_gib = -1;         //!< >= 0: instead of the profile's
  std::string judge_model = std::string(judge::kDefaultJudgeModel);  //!< for sharded runs
};

struct TestOutcome {
  dataset::VerdictRow row;
  bool reference_reused = false;
  std::filesystem::path run_dir;  //!< holds run.py, stdout.txt, stderr.txt
  std::size_t stdout_bytes = 0;   //!< what the run printed in all (only the tail is kept)
};

//! A verdict, or an error when the test could not be set up (unknown model or backend, a
//! stack without the compiler) — those are not verdicts on the backend.
Result<TestOutcome> run_model_test(const TestRequest& request, run::ProcessLauncher& launcher);

}  // namespace canrun::verdict
