#include "cli/app.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>

#include "cli/commands.h"
#include "cli/exit_code.h"
#include "core/log.h"
#include "core/text.h"
#include "core/version.h"

namespace canrun::cli {
namespace {

constexpr std::string_view kDescription =
    "canrun: does this Hugging Face Hub model run, unmodified, on my accelerator, and how well?";

//! The innermost subcommand the user named, for "see canrun X --help" hints.
const CLI::App* chosen_command(const CLI::App& app) {
  for (const CLI::App* sub : app.get_subcommands()) return chosen_command(*sub);
  return &app;
}

std::string command_path(const CLI::App* command) {
  std::string path;
  for (const CLI::App* at = command; at != nullptr; at = at->get_parent()) {
    path = path.empty() ? at->get_name() : at->get_name() + " " + path;
  }
  return path;
}

//! Each word that is not an option must name a subcommand until a command without
//! subcommands is reached; CLI11 would only say "argument not expected", so name the unknown
//! command ourselves, with its parent ("dataset frob").
std::optional<std::string> unknown_command(const CLI::App& app, int argc, char** argv) {
  const CLI::App* current = &app;
  std::string path;
  for (int idx = 1; idx < argc; ++idx) {
    std::string_view arg = argv[idx];
    if (arg == "--") return std::nullopt;
    if (arg.starts_with('-')) {
      // An option's value is not a command: skip it ("--backend cpu").
      const CLI::Option* option =
          arg.find('=') == std::string_view::npos
              ? current->get_option_no_throw(std::string(arg))
              : nullptr;
      if (option != nullptr && option->get_items_expected_min() > 0) ++idx;
      continue;
    }
    const auto subcommands = current->get_subcommands({});
    if (subcommands.empty()) return std::nullopt;
    const auto found =
        std::find_if(subcommands.begin(), subcommands.end(),
                     [&](const CLI::App* sub) { return sub->check_name(std::string(arg)); });
    path += path.empty() ? std::string(arg) : " " + std::string(arg);
    if (found == subcommands.end()) return path;
    current = *found;
  }
  return std::nullopt;
}

}  // namespace

int run(int argc, char** argv) {
  CLI::App app{std::string(kDescription), "canrun"};
  app.set_version_flag("--version", fmt::format("canrun {}", kCanrunVersion),
                       "Print the version and exit");
  int verbosity = 0;
  bool quiet = false;
  app.add_flag("-v,--verbose", verbosity, "Log more (debug messages)");
  app.add_flag("-q,--quiet", quiet, "Log errors only");
  app.fallthrough();
  app.require_subcommand(0, 1);
  app.footer(
      "Exit codes: 0 success, 1 a failed verdict or check, 2 bad usage or input.\n"
      "Run 'canrun COMMAND --help' for a command's options.");

  CommandAction action;
  CommandRegistry registry{&app, &action};
  register_test_command(registry);
  register_campaign_command(registry);
  register_worker_command(registry);
  register_plan_command(registry);
  register_render_command(registry);
  register_judge_command(registry);
  register_dataset_command(registry);
  register_cache_command(registry);
  register_hub_command(registry);
  register_serve_command(registry);

  if (const auto unknown = unknown_command(app, argc, argv)) {
    log::error("unknown command {}; run 'canrun --help' for the list", quote_for_message(*unknown));
    return kExitUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << chosen_command(app)->help();
    return kExitOk;
  } catch (const CLI::CallForVersion& version) {
    std::cout << version.what() << '\n';
    return kExitOk;
  } catch (const CLI::ParseError& error) {
    const CLI::App* command = chosen_command(app);
    log::error("{}; run '{} --help' for usage", error.what(), command_path(command));
    return kExitUsage;
  }
  if (!action) {
    std::cerr << app.help();
    log::error("no command given");
    return kExitUsage;
  }
  log::set_level(quiet           ? log::Level::kError
                 : verbosity > 0 ? log::Level::kDebug
                                 : log::Level::kInfo);
  return action();
}

}  // namespace canrun::cli
