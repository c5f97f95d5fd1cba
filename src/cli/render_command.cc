// canrun render MODEL: print the run.py that canrun test MODEL would run with the same options
// — the same resolution, task, exclusions, plan and rendering (src/trial), nothing run.
// --cores/--parallelism give the placement by hand instead of planning. A model a campaign would
// exclude (src/trial/exclusion.h) has no run.py: its reason and why on stderr, exit 1.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/exit_code.h"
#include "cli/trial_options.h"
#include "trial/trial.h"

namespace canrun::cli {
namespace {

int run_render(const TrialOptions& options) {
  CANRUN_ASSIGN_OR_RETURN_EXIT(trial::TrialRequest request, trial_request(options));
  auto launcher = process::make_posix_launcher();
  CANRUN_ASSIGN_OR_RETURN_EXIT(trial::PreparedTrial trial,
                               trial::prepare_trial(request, *launcher));
  if (trial.plan.exclusion) {
    std::cerr << fmt::format("canrun: {} is excluded on {} ({}): {}\n", trial.checkpoint.model_id,
                             trial.profile.name, *trial.plan.exclusion, trial.plan.why);
    return kExitFailed;
  }
  std::cout << trial.script;
  // What was rendered, on stderr so that `canrun render M > run.py` keeps run.py alone.
  std::cerr << fmt::format("canrun: run.py for {} ({}) on {}: {} {} ({})\n",
                           trial.checkpoint.model_id, trial.request.task, trial.profile.name,
                           trial.plan.cores, trial.plan.cores == 1 ? "core" : "cores",
                           to_string(trial.plan.parallelism));
  return kExitOk;
}

}  // namespace

void register_render_command(const CommandRegistry& registry) {
  auto options = std::make_shared<TrialOptions>();
  const char* help =
      "Print the run.py canrun test would run for a model and backend (planned the same way; "
      "runs nothing)";
  add_trial_options(registry.root->add_subcommand("render", help), *options)
      ->callback(
          [registry, options] { *registry.action = [options] { return run_render(*options); }; });
}

}  // namespace canrun::cli
