// canrun plan MODEL: the cores, parallelism and per-core budget a backend would give a model,
// and why — from its safetensors headers (Hub range requests, the HF cache, or a local folder)
// and the stack's transformers (does the architecture have a TP / EP plan). Exit 0 when the
// model can be placed, 1 when it would be excluded (too_large, no_parallel_plan), 2 on bad input.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "backend/profile.h"
#include "cli/commands.h"
#include "cli/exit_code.h"
#include "core/cache_dir.h"
#include "core/json_output.h"
#include "core/model_id.h"
#include "core/text.h"
#include "hub/facts_reader.h"
#include "hub/hub_client.h"
#include "plan/stack_plan.h"
#include "run/stack.h"

namespace canrun::cli {
namespace {

namespace fs = std::filesystem;

struct PlanOptions {
  std::string model;
  std::string revision = "main";
  std::string backend = "cpu";
  double memory_per_core_gib = 0;  //!< 0: the profile's
  double reserve_gib = -1;         //!< < 0: the profile's
  std::string python;
  bool json = false;
};

Result<hub::ModelFacts> read_facts(const PlanOptions& options) {
  if (options.model.find('/') != std::string::npos && fs::is_directory(options.model)) {
    return hub::local_model_facts(options.model, std::nullopt);
  }
  CANRUN_ASSIGN_OR_RETURN(ModelId id, ModelId::parse(options.model));
  CANRUN_ASSIGN_OR_RETURN(Revision revision, Revision::parse(options.revision));
  CANRUN_ASSIGN_OR_RETURN(hub::HubConfig config, hub::HubConfig::from_environment());
  hub::HubClient client(std::move(config),
                        hub::make_curl_transport(hub::default_transport_options()));
  auto facts = hub::fetch_model_facts(client, hub::HfCache::from_environment(), id, revision);
  if (!facts.ok()) return facts.error().with_context(id.str());
  return facts;
}

int run_plan(const PlanOptions& options) {
  CANRUN_ASSIGN_OR_RETURN_EXIT(backend::BackendProfile profile,
                               backend::find_profile(options.backend));
  if (auto status = backend::override_memory(profile.topology, options.memory_per_core_gib,
                                             options.reserve_gib);
      !status.ok()) {
    return report(status.error());
  }
  CANRUN_ASSIGN_OR_RETURN_EXIT(hub::ModelFacts facts, read_facts(options));
  if (facts.model_id.empty()) facts.model_id = options.model;
  auto launcher = run::make_posix_launcher();
  const std::string python = options.python.empty() ? run::default_python() : options.python;
  CANRUN_ASSIGN_OR_RETURN_EXIT(auto versions,
                               run::probe_versions(python, {"transformers"}, *launcher));
  const auto library = versions.find("transformers");
  if (library == versions.end())
    return report(not_found(fmt::format("{} has no transformers", python)));
  CANRUN_ASSIGN_OR_RETURN_EXIT(plan::StackPlan plan,
                               plan::plan_on_stack(facts, python, library->second, profile.topology,
                                                   default_cache_dir() / "probes", *launcher));
  const plan::PlannedShards& shards = plan.shards;
  const plan::ParallelSupport& support = plan.support;
  const plan::PlanFacts& input = plan.input;
  const std::string model_id = facts.model_id.empty() ? options.model : facts.model_id;
  if (options.json) {
    nlohmann::json out = {
        {"model_id", model_id},
        {"backend", profile.name},
        {"placed", shards.placed},
        {"cores", shards.placed ? nlohmann::json(shards.cores) : nlohmann::json(nullptr)},
        {"parallelism", shards.placed ? nlohmann::json(plan::to_string(shards.parallelism))
                                      : nlohmann::json(nullptr)},
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
                               plan::to_string(shards.parallelism));
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
  plan->add_option("MODEL", options->model, "Hub id, or a local checkpoint folder")->required();
  plan->add_option("--backend,-b", options->backend, "Backend profile name or .toml path")
      ->capture_default_str();
  plan->add_option("--revision", options->revision, "Branch, tag or commit")->capture_default_str();
  plan->add_option("--memory-per-core", options->memory_per_core_gib,
                   "GiB per core (default: the profile's)");
  plan->add_option("--reserve", options->reserve_gib,
                   "GiB of each core kept for activations (default: the profile's)");
  plan->add_option("--python", options->python,
                   "The stack's Python, whose transformers is asked for TP/EP plans");
  plan->add_flag("--json", options->json, "Machine-readable output");
  plan->callback(
      [registry, options] { *registry.action = [options] { return run_plan(*options); }; });
}

}  // namespace canrun::cli
