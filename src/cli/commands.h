// The subcommands of canrun, one file each. A register function adds its subcommand to the
// root; when that subcommand is chosen its callback stores the work to do in `*action`, which
// run() calls after parsing has finished and logging is set up.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace canrun::cli {

//! The work of the chosen command; returns the exit code.
using CommandAction = std::function<int()>;

struct CommandRegistry {
  CLI::App* root;
  CommandAction* action;
};

void register_campaign_command(const CommandRegistry& registry);
void register_census_command(const CommandRegistry& registry);
void register_worker_command(const CommandRegistry& registry);
void register_dataset_command(const CommandRegistry& registry);
void register_cache_command(const CommandRegistry& registry);
void register_hub_command(const CommandRegistry& registry);
void register_judge_command(const CommandRegistry& registry);
void register_plan_command(const CommandRegistry& registry);
void register_render_command(const CommandRegistry& registry);
void register_test_command(const CommandRegistry& registry);
void register_serve_command(const CommandRegistry& registry);

}  // namespace canrun::cli
