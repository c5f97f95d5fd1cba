#include "trial/packages_retry.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/log.h"
#include "run/packages_on_top.h"

namespace canrun::trial {

namespace fs = std::filesystem;

Result<std::optional<run::ScriptRun>> retry_with_packages(
    const PreparedTrial& trial, const stack::StackPython& python, const std::string& error,
    std::vector<std::string>& learned, TrialOutcome& outcome, run::ScriptPlace& place,
    run::Classification& failure, std::map<std::string, std::string>& env,
    process::ProcessLauncher& launcher) {
  const run::PackageRequest wanted = run::packages_for(error);
  std::string note;
  if (!wanted.unreviewed.empty()) {
    note = fmt::format("canrun does not install {} on top of the stack: not a reviewed package",
                       fmt::join(wanted.unreviewed, ", "));
  }
  // Only what was not on top already: the same request again would fail the same way.
  std::vector<std::string> fresh;
  for (const std::string& distribution : wanted.distributions) {
    if (std::find(learned.begin(), learned.end(), distribution) == learned.end())
      fresh.push_back(distribution);
  }
  std::optional<run::ScriptRun> retried;
  if (!fresh.empty()) {
    std::vector<std::string> all = learned;
    all.insert(all.end(), fresh.begin(), fresh.end());
    const fs::path overlays = trial.cache_dir / "overlays";
    auto overlay = run::install_what_can_be_had(python, all, overlays);
    if (overlay.ok()) {
      log::info("retrying {} with {} on top of the stack", trial.checkpoint.model_id,
                fmt::join(overlay->packages, " "));
      if (learned.empty()) {  // the first attempt's output, kept
        for (const char* name : {"stdout", "stderr"}) {
          std::error_code ignored;
          fs::rename(outcome.run_dir / fmt::format("{}.txt", name),
                     outcome.run_dir / fmt::format("{}.first.txt", name), ignored);
        }
      }
      learned = std::move(all);
      place.python_path = {overlay->site};
      outcome.row.packages = overlay->packages;
      for (auto& [name, value] : run::script_environment(trial.profile, place)) env[name] = value;
      CANRUN_ASSIGN_OR_RETURN(retried, run::run_script(trial.script, outcome.run_dir, trial.python,
                                                       env, trial.request.timeout, launcher,
                                                       run::script_caches(trial.profile, place)));
    } else {
      note = fmt::format("installing {} on top of the stack failed: {}", fmt::join(all, ", "),
                         overlay.error().message());
    }
  }
  if (!retried && !note.empty()) failure.error += fmt::format("\n[canrun: {}]", note);
  return retried;
}

}  // namespace canrun::trial
