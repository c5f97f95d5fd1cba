#include "cli/trial_options.h"

#include <fmt/format.h>

#include <chrono>

#include "core/cache_dir.h"
#include "task/task.h"

namespace canrun::cli {

void add_model_options(CLI::App& command, TrialOptions& options) {
  trial::TrialRequest& request = options.request;
  command
      .add_option("MODEL", request.model,
                  "Hub id, or a local checkpoint folder (a path: ./, ../, / or ~ first, or a "
                  "folder that exists)")
      ->required();
  command.add_option("--revision", request.revision, "Branch, tag or commit")
      ->capture_default_str();
  command.add_option("--task", request.task,
                     fmt::format("Hub pipeline_tag of the recipe: {} (default: the model's: its "
                                 "pipeline_tag, model_index.json or architecture)",
                                 fmt::join(task::task_names(), ", ")));
  command.add_option("--exclusions", options.exclusions,
                     "Curated exclusions, applied as a campaign applies them (default: the "
                     "shipped catalog/exclusions.toml)");
  add_stack_options(command, options);
}

void add_stack_options(CLI::App& command, TrialOptions& options) {
  trial::TrialRequest& request = options.request;
  command.add_option("--backend,-b", request.backend, "Backend profile name or .toml path")
      ->capture_default_str();
  command.add_option("--memory-per-core", request.memory_per_core_gib,
                     "GiB per core for the plan (default: the profile's; less plans more cores)");
  command.add_option("--reserve", request.reserve_gib,
                     "GiB of each core kept for activations (default: the profile's)");
  command.add_option("--python", request.python,
                     "The stack's Python (default: $CANRUN_PYTHON or the venv)");
  command.add_option("--cache", options.cache,
                     "Folder for references, compile caches, stack answers and runs (default: "
                     "$CANRUN_CACHE)");
}

CLI::App* add_trial_options(CLI::App* command, TrialOptions& options) {
  add_model_options(*command, options);
  trial::TrialRequest& request = options.request;
  command->add_option("--tokens", request.new_tokens, "New tokens to generate (greedy)")
      ->capture_default_str();
  command
      ->add_option("--long-tokens", request.long_tokens,
                   "Text generation and image-text-to-text: after the check, generate this many "
                   "tokens compiled, measuring their speed and agreement with the CPU reference "
                   "(0: off)")
      ->capture_default_str();
  command->add_flag_callback(
      "--no-perf", [&request] { request.perf = false; },
      "Skip the eager baseline (the same model without torch.compile, "
      "measured first, for speedup and memory ratio)");
  command->add_option("--prompt", request.prompt, "Prompt (default: the task's)");
  command->add_option("--cores", options.cores,
                      "Ranks to run, instead of planning (with --parallelism; see canrun plan)");
  command->add_option("--parallelism", options.parallelism,
                      "With --cores: how the ranks share the model: none, tp or ep (default: "
                      "the one the stack offers at that many cores)");
  return command;
}

Result<trial::TrialRequest> trial_request(const TrialOptions& options) {
  trial::TrialRequest request = options.request;
  if (options.timeout_s < 1) return invalid_argument("--timeout must be at least 1 second");
  request.timeout = std::chrono::seconds(options.timeout_s);
  if (!options.cache.empty()) request.cache_dir = options.cache;
  if (!options.exclusions.empty()) {
    CANRUN_ASSIGN_OR_RETURN(request.exclusions_file,
                            given_file("--exclusions", options.exclusions));
  } else if (const auto catalog = shipped_dir("catalog");
             catalog && std::filesystem::is_regular_file(*catalog / "exclusions.toml")) {
    request.exclusions_file = *catalog / "exclusions.toml";
  }
  if (options.cores != 0 || !options.parallelism.empty()) {
    trial::PlanOverride plan;
    plan.cores = options.cores == 0 ? 1 : options.cores;
    if (!options.parallelism.empty()) {
      CANRUN_ASSIGN_OR_RETURN(plan.parallelism,
                              parse_parallelism(options.parallelism, "--parallelism"));
    } else if (plan.cores == 1) {
      plan.parallelism = Parallelism::kNone;
    }
    request.plan_override = plan;
  }
  return request;
}

}  // namespace canrun::cli
