// Packages on top (run/packages_on_top.h), as the trial's run step uses them: a load failure
// naming missing modules of the reviewed map gets them installed into an overlay, recorded in
// the row, and the run tried again with it; a retry that fails asking for another reviewed
// package gets it too (a tokenizer that needs sentencepiece, then protobuf), up to
// kPackageRetries tries. Internal to src/trial.
//
// Thread safety: as run_on_device (trial.h); overlays are shared through the cache folder.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "process/process.h"
#include "run/classify.h"
#include "run/script_run.h"
#include "stack/stack.h"
#include "trial/trial.h"

namespace canrun::trial {

//! The most times a run is tried again with more packages on top.
inline constexpr int kPackageRetries = 3;

//! Retries the run with the packages `error` (the load failure's traceback) asks for on top,
//! beside those of `learned` (the distributions earlier retries installed, which it extends);
//! the failed attempt's output is kept as stdout.first.txt and stderr.first.txt (the first
//! one's), `place` and `env` get the overlay, and the row its packages. Nothing retried (nothing
//! new asked for, not reviewed, install failed): nullopt, with `failure.error` saying why when
//! there is something to say.
Result<std::optional<run::ScriptRun>> retry_with_packages(
    const PreparedTrial& trial, const stack::StackPython& python, const std::string& error,
    std::vector<std::string>& learned, TrialOutcome& outcome, run::ScriptPlace& place,
    run::Classification& failure, std::map<std::string, std::string>& env,
    process::ProcessLauncher& launcher);

}  // namespace canrun::trial
