// Packages on top (run/packages_on_top.h), as the trial's run step uses them: a load failure
// naming missing modules of the reviewed map gets them installed into an overlay, recorded in
// the row, and the run tried once more with it. Internal to src/trial.
//
// Thread safety: as run_on_device (trial.h); overlays are shared through the cache folder.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "core/result.h"
#include "process/process.h"
#include "run/classify.h"
#include "run/script_run.h"
#include "stack/stack.h"
#include "trial/trial.h"

namespace canrun::trial {

//! Retries the run once with the packages `error` (the load failure's traceback) asks for on
//! top; the first attempt's output is kept as stdout.first.txt and stderr.first.txt, `place`
//! and `env` get the overlay, and the row its packages. Nothing retried: nullopt, with
//! `failure.error` saying why when there is something to say (not reviewed, install failed).
Result<std::optional<run::ScriptRun>> retry_with_packages(
    const PreparedTrial& trial, const stack::StackPython& python, const std::string& error,
    TrialOutcome& outcome, run::ScriptPlace& place, run::Classification& failure,
    std::map<std::string, std::string>& env, process::ProcessLauncher& launcher);

}  // namespace canrun::trial
