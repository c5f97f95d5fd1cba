#include "cli/app.h"

#include <fmt/format.h>
#include <sys/prctl.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/commands.h"
#include "cli/exit_code.h"
#include "core/log.h"
#include "core/text.h"
#include "core/version.h"
#include "process/box.h"
#include "process/environment.h"

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

//! The help of `command` itself (App::help() gives a chosen subcommand's), its usage line
//! naming the whole command ("Usage: canrun dataset show [OPTIONS] DIR"), where CLI11 names a
//! subcommand alone.
std::string help_of(const CLI::App* command) {
  return command->get_formatter()->make_help(command, command_path(command),
                                             CLI::AppFormatMode::Normal);
}

//! `canrun help [COMMAND...]`: the help of canrun or of the command named (to stdout, exit 0);
//! an unknown command exits 2, as everywhere.
int print_help(const CLI::App& app, const std::vector<std::string>& words) {
  const CLI::App* command = &app;
  std::string named;
  for (const std::string& word : words) {
    named += (named.empty() ? "" : " ") + word;
    const auto subcommands = command->get_subcommands({});
    const auto found = std::find_if(subcommands.begin(), subcommands.end(),
                                    [&](const CLI::App* sub) { return sub->check_name(word); });
    if (found == subcommands.end()) {
      log::error("unknown command {}; run 'canrun help' for the list", quote_for_message(named));
      return kExitUsage;
    }
    command = *found;
  }
  std::cout << help_of(command);
  return kExitOk;
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
      const CLI::Option* option = arg.find('=') == std::string_view::npos
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

//! Adds `names` to CANRUN_PASS_ENV, which the processes canrun starts inherit (a fleet's
//! workers too); refuses a malformed entry or a secret, in either.
Status pass_environment(const std::vector<std::string>& names) {
  const char* existing = std::getenv(process::kPassEnvVariable.data());
  std::string value = existing == nullptr ? "" : existing;
  for (const std::string& name : names) value += (value.empty() ? "" : ",") + name;
  CANRUN_RETURN_IF_ERROR(process::passed_names(value));
  if (!names.empty()) ::setenv(process::kPassEnvVariable.data(), value.c_str(), 1);
  return ok_status();
}

}  // namespace

int run(int argc, char** argv) {
  // What canrun starts for a model runs as the same user: non-dumpable, canrun's memory and
  // /proc/<pid>/environ (its secrets) need CAP_SYS_PTRACE over it to be read, which a boxed
  // run never has, nor an unboxed one of a user without it.
  ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  // canrun as the helper that runs a command in a box (process/box.h); not a user's command.
  if (argc >= 2 && std::string_view(argv[1]) == process::kBoxCommand)
    return process::box_main(std::vector<std::string>(argv + 2, argv + argc));
  std::error_code no_helper;  // then runs are not boxed (isolation "none")
  process::set_box_helper(std::filesystem::read_symlink("/proc/self/exe", no_helper));
  CLI::App app{std::string(kDescription), "canrun"};
  app.set_version_flag("--version", fmt::format("canrun {}", kCanrunVersion),
                       "Print the version and exit");
  int verbosity = 0;
  bool quiet = false;
  app.add_flag("-v,--verbose", verbosity, "Log more (debug messages)");
  app.add_flag("-q,--quiet", quiet, "Log errors only");
  std::vector<std::string> pass_env;
  app.add_option("--pass-env", pass_env,
                 "Also give NAME (or every variable starting with PREFIX, as PREFIX*) to what "
                 "canrun runs for a model (run.py, the CPU reference, the judge); repeatable. "
                 "They get an allow-list of canrun's environment and never a secret (README, "
                 "\"Isolation\"); the same as CANRUN_PASS_ENV=NAME,...")
      ->type_name("NAME");
  std::string isolation_setting;
  app.add_option("--isolation", isolation_setting,
                 "How what canrun runs for a model is boxed: auto (the most this machine "
                 "allows: namespaces, no network but loopback, read-only but its folders, "
                 "bounded processes) or none (as before the box; secrets are still kept out); "
                 "the same as CANRUN_ISOLATION")
      ->check(CLI::IsMember({"auto", "none"}))
      ->type_name("auto|none");
  int max_processes = 0;
  app.add_option("--max-processes", max_processes,
                 fmt::format("Tasks (processes and threads) a boxed run may have at once; "
                             "default {}; the same as CANRUN_MAX_PROCESSES",
                             process::kDefaultMaxProcesses))
      ->check(CLI::Range(1, 1 << 22))
      ->type_name("N");
  app.fallthrough();
  app.require_subcommand(0, 1);
  app.footer(
      "Exit codes: 0 success, 1 a failed verdict or check, 2 bad usage or input.\n"
      "Run 'canrun help COMMAND' or 'canrun COMMAND --help' for a command's options.");

  CommandAction action;
  CommandRegistry registry{&app, &action};
  register_test_command(registry);
  register_campaign_command(registry);
  register_census_command(registry);
  register_worker_command(registry);
  register_plan_command(registry);
  register_render_command(registry);
  register_judge_command(registry);
  register_dataset_command(registry);
  register_cache_command(registry);
  register_hub_command(registry);
  register_serve_command(registry);
  std::vector<std::string> help_words;
  CLI::App* help = app.add_subcommand("help", "Print the help of canrun, or of COMMAND");
  help->add_option("COMMAND", help_words, "A command, e.g. test or dataset show");
  help->callback([&] { action = [&] { return print_help(app, help_words); }; });

  if (const auto unknown = unknown_command(app, argc, argv)) {
    log::error("unknown command {}; run 'canrun --help' for the list", quote_for_message(*unknown));
    return kExitUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << help_of(chosen_command(app));
    return kExitOk;
  } catch (const CLI::CallForVersion& version) {
    std::cout << version.what() << '\n';
    return kExitOk;
  } catch (const CLI::ParseError& error) {
    const CLI::App* command = chosen_command(app);
    log::error("{}; run '{} --help' for usage", error.what(), command_path(command));
    return kExitUsage;
  }
  if (!isolation_setting.empty())
    ::setenv(process::kIsolationVariable.data(), isolation_setting.c_str(), 1);
  if (max_processes > 0)
    ::setenv(process::kMaxProcessesVariable.data(), std::to_string(max_processes).c_str(), 1);
  if (auto passed = pass_environment(pass_env); !passed.ok()) {
    log::error("{}", passed.error().message());
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
