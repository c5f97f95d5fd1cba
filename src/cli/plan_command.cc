// canrun plan MODEL: the cores, parallelism and per-core budget a backend would give a model,
// and why — from its safetensors headers (MODEL resolved as every command resolves it: see
// src/trial/checkpoint.h) and the stack's transformers (does the architecture have a TP / EP plan).
// Exit 0 when the model can be placed, 1 when it would be excluded (too_large, no_parallel_plan), 2
// on bad input.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "backend/profile.h"
#include "cli/commands.h"
#include "cli/exit_code.h"
#include "cli/trial_options.h"
#include "core/json_output.h"
#include "core/text.h"
#include "plan/stack_plan.h"
#include "stack/stack.h"
#include "trial/checkpoint.h"
#include "trial/trial.h"

namespace canrun::cli {
namespace {

namespace fs = std::filesystem;

struct PlanOptions {
  TrialOptions trial;
  bool json = false;
};

int run_plan(const PlanOptions& options) {
  CANRUN_ASSIGN_OR_RETURN_EXIT(trial::TrialRequest request, trial_request(options.trial));
  CANRUN_ASSIGN_OR_RETURN_EXIT(backend::BackendProfile profile, trial::trial_profile(request));
  CANRUN_ASSIGN_OR_RETURN_EXIT(trial::Checkpoint checkpoint,
                               trial::resolve_checkpoint({request.model, request.revision, {}}));
  if (checkpoint.no_safetensors) {
    return report(checkpoint.no_safetensors->with_context(checkpoint.model_id));
  }
  const hub::ModelFacts& facts = checkpoint.facts;
  auto launcher = process::make_posix_launcher();
  const stack::StackPython python(
      request.python, request.cache_dir.empty() ? fs::path() : request.cache_dir / "stack",
      *launcher);
  CANRUN_ASSIGN_OR_RETURN_EXIT(std::string library_version, stack::probe_library_version(python));
  CANRUN_ASSIGN_OR_RETURN_EXIT(
      plan::StackPlan plan, plan::plan_on_stack(facts, python, library_version, profile.topology));
  const plan::PlannedShards& shards = plan.shards;
  const plan::ParallelSupport& support = plan.support;
  const plan::PlanFacts& input = plan.input;
  const std::string& model_id = checkpoint.model_id;
  if (options.json) {
    nlohmann::json out = {
        {"model_id", model_id},
        {"backend", profile.name},
        {"placed", shards.placed},
        {"cores", shards.placed ? nlohmann::json(shards.cores) : nlohmann::json(nullptr)},
        {"parallelism",
         shards.placed ? nlohmann::json(to_string(shards.parallelism)) : nlohmann::json(nullptr)},
        {"exclusion_reason",
         shards.placed ? nlohmann::json(nullptr) : nlohmann::json(shards.exclusion)},
        {"weights_bytes", shards.weights_bytes},
        {"weights_bytes_by_dtype", facts.weights_bytes_by_dtype},
        {"per_core_bytes", shards.per_core_bytes},
        {"budget_bytes", shards.budget_bytes},
        {"library_version", support.library_version},
        {"model_type", input.model_type},
        {"tp_plan", support.tp_plan},
        {"ep_plan", support.ep_plan},
        {"why", shards.why}};
    print_json(std::cout, out);
  } else {
    if (shards.placed) {
      std::cout << fmt::format("{} on {}: {} core{}, parallelism {}\n", model_id, profile.name,
                               shards.cores, shards.cores == 1 ? "" : "s",
                               to_string(shards.parallelism));
    } else {
      std::cout << fmt::format("{} on {}: not placed, excluded as {}\n", model_id, profile.name,
                               shards.exclusion);
    }
    std::string by_dtype;
    for (const auto& [dtype, bytes] : facts.weights_bytes_by_dtype) {
      by_dtype += fmt::format("{}{} {}", by_dtype.empty() ? "" : ", ", dtype,
                              format_bytes(static_cast<std::int64_t>(bytes)));
    }
    std::cout << fmt::format("weights   {} ({})\n",
                             format_bytes(static_cast<std::int64_t>(shards.weights_bytes)),
                             by_dtype);
    std::cout << fmt::format("per core  {} of a {} budget\n",
                             format_bytes(static_cast<std::int64_t>(shards.per_core_bytes)),
                             format_bytes(static_cast<std::int64_t>(shards.budget_bytes)));
    std::cout << fmt::format("why       {}\n", shards.why);
  }
  return shards.placed ? kExitOk : kExitFailed;
}

}  // namespace

void register_plan_command(const CommandRegistry& registry) {
  auto options = std::make_shared<PlanOptions>();
  CLI::App* plan = registry.root->add_subcommand("plan",
                                                 "The fewest cores that hold a model's weights on "
                                                 "a backend: cores, parallelism, budget, and why");
  add_model_options(*plan, options->trial);
  plan->add_flag("--json", options->json, "Machine-readable output");
  plan->callback(
      [registry, options] { *registry.action = [options] { return run_plan(*options); }; });
}

}  // namespace canrun::cli
