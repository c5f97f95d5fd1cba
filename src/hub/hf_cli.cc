#include "hub/hf_cli.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "core/text.h"
#include "process/environment.h"

namespace canrun::hub {
namespace {

namespace fs = std::filesystem;

//! What `hf` printed last, for an error message: stderr, else stdout, trimmed.
std::string output_tail(const process::ProcessOutcome& outcome) {
  std::string text = outcome.stderr_tail.find_first_not_of(" \n\t") != std::string::npos
                         ? outcome.stderr_tail
                         : outcome.stdout_tail;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  constexpr std::size_t kShown = 2000;
  if (text.size() > kShown) text = "..." + text.substr(text.size() - kShown);
  return make_valid_utf8(text);
}

//! `arg` as a shell would need it, so a command in a message can be pasted and run.
std::string shell_word(const std::string& arg) {
  const bool plain = !arg.empty() && arg.find_first_not_of(
                                         "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                         "0123456789_-./:=+@%,") == std::string::npos;
  if (plain) return arg;
  std::string quoted = "'";
  for (const char c : arg) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

}  // namespace

Result<fs::path> find_hf_cli() {
  const char* path = std::getenv("PATH");
  const std::string search = path != nullptr ? path : "";
  for (std::size_t start = 0; start <= search.size();) {
    const std::size_t end = std::min(search.find(':', start), search.size());
    const fs::path folder = end > start ? fs::path(search.substr(start, end - start)) : ".";
    const fs::path candidate = folder / "hf";
    if (::access(candidate.c_str(), X_OK) == 0 && !fs::is_directory(candidate)) return candidate;
    start = end + 1;
  }
  return not_found(
      "the hf command (huggingface_hub's CLI) is not on PATH; install it with `pip install "
      "huggingface_hub` (1.5 or later, which has `hf buckets`), or put its folder on PATH");
}

Result<process::ProcessOutcome> run_hf(const std::vector<std::string>& args,
                                       process::ProcessLauncher& launcher,
                                       std::chrono::seconds timeout) {
  CANRUN_ASSIGN_OR_RETURN(const fs::path hf, find_hf_cli());
  process::ProcessSpec spec;
  spec.argv.push_back(hf.string());
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env = process::environment_for(process::Audience::kHf);
  spec.env["NO_COLOR"] = "1";  // its output is read, not shown on a terminal
  spec.timeout = timeout;
  std::string command = "hf";
  for (const std::string& arg : args) command += " " + shell_word(arg);
  CANRUN_ASSIGN_OR_RETURN(process::ProcessOutcome outcome, launcher.run(spec));
  if (outcome.timed_out) {
    return Error(ErrorCode::kUnavailable,
                 fmt::format("`{}` did not finish within {} s", command, timeout.count()));
  }
  if (outcome.exit_code != 0) {
    const std::string how = outcome.exit_code
                                ? fmt::format("exit {}", *outcome.exit_code)
                                : fmt::format("signal {}", outcome.term_signal.value_or(0));
    return Error(ErrorCode::kUnavailable,
                 fmt::format("`{}` failed ({}): {}", command, how, output_tail(outcome)));
  }
  return outcome;
}

}  // namespace canrun::hub
