// canrun plan MODEL: the cores, parallelism and per-core budget a backend would give a model,
// and why — from its safetensors headers (MODEL resolved as every command resolves it: see
// src/trial/checkpoint.h) and the stack's transformers (does the architecture have a TP / EP plan).
// The model is screened first as canrun test and a campaign screen it (src/trial/exclusion.h:
// curated, gated, remote_code, quantized, unsupported_task, no_safetensors, ...), for --task or
// the model's own task. Exit 0 when the model can be placed, 1 when it is excluded (by that rule
// or by planning: too_large, no_parallel_plan), 2 on bad input.
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
#include "trial/trial.h"

namespace canrun::cli {
namespace {

struct PlanOptions {
  TrialOptions trial;
  bool json = false;
};

int run_plan(const PlanOptions& options) {
  CANRUN_ASSIGN_OR_RETURN_EXIT(trial::TrialRequest request, trial_request(options.trial));
  auto launcher = process::make_posix_launcher();
  // Screened and planned as canrun test and a campaign would (trial/exclusion.h).
  CANRUN_ASSIGN_OR_RETURN_EXIT(trial::PreparedTrial trial,
                               trial::prepare_trial(request, *launcher));
  const trial::TrialPlan& plan = trial.plan;
  const std::string& model_id = trial.checkpoint.model_id;
  const std::string& backend = trial.profile.name;
  const hub::ModelFacts& facts = trial.checkpoint.facts;
  const plan::StackPlan* stack_plan = plan.stack_plan ? &*plan.stack_plan : nullptr;
  const bool placed = !plan.exclusion;
  // Why: the exclusion's, else the planner's (none when the weights hold no tensors).
  const std::string why = plan.exclusion ? plan.why
                          : stack_plan   ? stack_plan->shards.why
                                         : "the weights hold no tensors: one core";
  const bool weights_known = !facts.tensors.empty();  // not when excluded before reading them
  if (options.json) {
    const auto planned = [&](auto field) {
      return stack_plan ? nlohmann::json(field(*stack_plan)) : nlohmann::json(nullptr);
    };
    nlohmann::json out = {
        {"model_id", model_id},
        {"task", trial.request.task},
        {"backend", backend},
        {"placed", placed},
        {"cores", placed ? nlohmann::json(plan.cores) : nlohmann::json(nullptr)},
        {"parallelism",
         placed ? nlohmann::json(to_string(plan.parallelism)) : nlohmann::json(nullptr)},
        {"exclusion_reason", placed ? nlohmann::json(nullptr) : nlohmann::json(*plan.exclusion)},
        {"weights_bytes", weights_known ? nlohmann::json(facts.weights_bytes) : nlohmann::json()},
        {"weights_bytes_by_dtype", facts.weights_bytes_by_dtype},
        {"per_core_bytes", planned([](const auto& p) { return p.shards.per_core_bytes; })},
        {"budget_bytes", planned([](const auto& p) { return p.shards.budget_bytes; })},
        {"library_version", planned([](const auto& p) { return p.support.library_version; })},
        {"model_type", facts.model_type ? nlohmann::json(*facts.model_type) : nlohmann::json()},
        {"tp_plan", planned([](const auto& p) { return p.support.tp_plan; })},
        {"ep_plan", planned([](const auto& p) { return p.support.ep_plan; })},
        {"why", why}};
    print_json(std::cout, out);
    return placed ? kExitOk : kExitFailed;
  }
  if (placed) {
    std::cout << fmt::format("{} on {}: {} core{}, parallelism {}\n", model_id, backend, plan.cores,
                             plan.cores == 1 ? "" : "s", to_string(plan.parallelism));
  } else {
    std::cout << fmt::format("{} on {}: not placed, excluded as {}\n", model_id, backend,
                             *plan.exclusion);
  }
  if (weights_known) {
    std::string by_dtype;
    for (const auto& [dtype, bytes] : facts.weights_bytes_by_dtype) {
      by_dtype += fmt::format("{}{} {}", by_dtype.empty() ? "" : ", ", dtype,
                              format_bytes(static_cast<std::int64_t>(bytes)));
    }
    std::cout << fmt::format("weights   {} ({})\n",
                             format_bytes(static_cast<std::int64_t>(facts.weights_bytes)),
                             by_dtype);
  }
  if (stack_plan) {
    const plan::PlannedShards& shards = stack_plan->shards;
    std::cout << fmt::format("per core  {} of a {} budget\n",
                             format_bytes(static_cast<std::int64_t>(shards.per_core_bytes)),
                             format_bytes(static_cast<std::int64_t>(shards.budget_bytes)));
  }
  std::cout << fmt::format("why       {}\n", why);
  return placed ? kExitOk : kExitFailed;
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
