#include "stack/python.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "core/atomic_file.h"
#include "core/cache_dir.h"
#include "core/log.h"
#include "core/text.h"
#include "process/environment.h"

namespace canrun::stack {
namespace {

namespace fs = std::filesystem;

std::string last_line(std::string text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  const auto newline = text.rfind('\n');
  return newline == std::string::npos ? text : text.substr(newline + 1);
}

}  // namespace

std::string default_python() {
  if (const char* env = std::getenv("CANRUN_PYTHON"); env != nullptr && *env != '\0') return env;
  const auto venv = executable_dir().parent_path() / ".venv" / "bin" / "python";
  return fs::exists(venv) ? venv.string() : "python3";
}

bool is_safe_name(std::string_view text) {
  return !text.empty() && text.size() <= 100 &&
         std::all_of(
             text.begin(), text.end(),
             [](unsigned char c) { return std::isalnum(c) || c == '_' || c == '-' || c == '.'; }) &&
         text.find("..") == std::string_view::npos;
}

StackPython::StackPython(std::string python, fs::path cache_root,
                         process::ProcessLauncher& launcher)
    : python_(python.empty() ? default_python() : std::move(python)),
      cache_root_(cache_root.empty() ? default_cache_dir() / "stack" : std::move(cache_root)),
      launcher_(launcher) {}

Result<nlohmann::json> StackPython::ask(std::string_view what, std::string_view script,
                                        const std::vector<std::string>& args,
                                        std::chrono::seconds timeout) const {
  process::ProcessSpec spec;
  spec.argv = {python_, "-c", std::string(script)};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env = process::environment_for(process::Audience::kRun);
  CANRUN_ASSIGN_OR_RETURN(const process::OwnFolders own,
                          process::OwnFolders::make(cache_root_ / "probe", spec.env));
  spec.timeout = timeout;
  spec.cwd = fs::temp_directory_path();
  auto outcome = launcher_.run(spec);
  if (!outcome.ok()) {
    return outcome.error().with_context(
        fmt::format("asking {} {}", quote_for_message(python_), what));
  }
  if (outcome->exit_code != 0) {
    std::string tail = outcome->stderr_tail;
    if (tail.size() > 400) tail = "..." + tail.substr(tail.size() - 400);
    return not_found(fmt::format("{}: the stack's Python {} could not answer: {}", what,
                                 quote_for_message(python_), quote_for_message(tail, 400)));
  }
  const std::string line = last_line(outcome->stdout_tail);
  auto answer = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (answer.is_discarded()) {
    return corrupt(fmt::format("{}: the stack's Python answered {}, not JSON", what,
                               quote_for_message(line, 200)));
  }
  return answer;
}

Result<nlohmann::json> StackPython::cached(
    const fs::path& key, const std::function<bool(const nlohmann::json&)>& valid,
    const std::function<Result<nlohmann::json>()>& compute) const {
  const fs::path path = cache_root_ / key;
  if (auto text = read_file(path); text.ok()) {
    auto stored = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
    if (stored.is_discarded()) log::warning("ignoring the malformed cache file {}", path.string());
    if (!stored.is_discarded() && valid(stored)) return stored;
  }
  CANRUN_ASSIGN_OR_RETURN(nlohmann::json answer, compute());
  store(key, answer);
  return answer;
}

void StackPython::store(const fs::path& key, const nlohmann::json& answer) const {
  const fs::path path = cache_root_ / key;
  std::error_code error;
  fs::create_directories(path.parent_path(), error);
  if (auto status = write_file_atomically(path, answer.dump(1) + "\n"); !status.ok()) {
    log::warning("could not cache the stack's answer: {}", status.error().message());
  }
}

}  // namespace canrun::stack
