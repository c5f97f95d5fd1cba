#include "hub/architecture_probe.h"

#include <fmt/format.h>

#include <cctype>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "core/log.h"
#include "core/text.h"

namespace canrun::hub {
namespace {

namespace fs = std::filesystem;

constexpr const char* kVersionScript =
    "import importlib.metadata as m\nprint(m.version('transformers'))\n";
// argv[1:] are identifiers (checked before); the answer is one JSON line.
constexpr const char* kCheckScript =
    "import json, sys\nimport transformers\n"
    "print(json.dumps({name: hasattr(transformers, name) for name in sys.argv[1:]}))\n";

Result<std::string> run_python(run::ProcessLauncher& launcher, const std::string& python,
                               std::vector<std::string> argv) {
  run::ProcessSpec spec;
  spec.argv = std::move(argv);
  spec.argv.insert(spec.argv.begin(), python);
  spec.env = run::current_environment();
  spec.timeout = std::chrono::seconds(120);
  spec.cwd = fs::temp_directory_path();
  CANRUN_ASSIGN_OR_RETURN(const run::ProcessOutcome outcome, launcher.run(spec));
  if (outcome.exit_code != 0) {
    std::string tail = outcome.stderr_tail;
    if (tail.size() > 400) tail = "..." + tail.substr(tail.size() - 400);
    return not_found(fmt::format("the stack's Python {} could not answer: {}",
                                 quote_for_message(python), quote_for_message(tail, 400)));
  }
  std::string out = outcome.stdout_tail;
  while (!out.empty() && std::isspace(static_cast<unsigned char>(out.back()))) out.pop_back();
  return out;
}

}  // namespace

bool is_python_identifier(std::string_view name) {
  if (name.empty() || name.size() > 200) return false;
  if (std::isdigit(static_cast<unsigned char>(name.front()))) return false;
  for (const unsigned char c : name) {
    if (!std::isalnum(c) && c != '_') return false;
  }
  return true;
}

fs::path TransformersProbe::default_cache_file() {
  fs::path root;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    root = xdg;
  } else {
    const char* home = std::getenv("HOME");
    root = fs::path(home != nullptr ? home : ".") / ".cache";
  }
  return root / "canrun" / "transformers_architectures.json";
}

Result<ArchitectureAnswers> TransformersProbe::check(
    const std::vector<std::string>& architectures) {
  ArchitectureAnswers answers;
  CANRUN_ASSIGN_OR_RETURN(answers.library_version,
                          run_python(launcher_, python_, {"-c", kVersionScript}));
  nlohmann::json cache = nlohmann::json::object();
  if (auto text = read_file(cache_file_); text.ok()) {
    cache = nlohmann::json::parse(*text, nullptr, false);
    if (!cache.is_object()) {
      log::warning("ignoring the malformed cache {}", cache_file_.string());
      cache = nlohmann::json::object();
    }
  }
  nlohmann::json& known = cache[answers.library_version];
  if (!known.is_object()) known = nlohmann::json::object();
  std::vector<std::string> ask;
  for (const auto& name : architectures) {
    if (!is_python_identifier(name)) {
      answers.known[name] = false;  // no class of transformers is named like that
    } else if (const auto it = known.find(name); it != known.end() && it->is_boolean()) {
      answers.known[name] = it->get<bool>();
    } else {
      ask.push_back(name);
    }
  }
  if (ask.empty()) return answers;
  std::vector<std::string> argv = {"-c", kCheckScript};
  argv.insert(argv.end(), ask.begin(), ask.end());
  ++imports_;
  CANRUN_ASSIGN_OR_RETURN(const std::string line, run_python(launcher_, python_, argv));
  const auto reply = nlohmann::json::parse(line, nullptr, false);
  for (const auto& name : ask) {
    if (!reply.is_object() || !reply.contains(name) || !reply[name].is_boolean()) {
      return corrupt(fmt::format("the stack's Python answered {} about {}",
                                 quote_for_message(line, 200), name));
    }
    answers.known[name] = reply[name].get<bool>();
    known[name] = answers.known[name];
  }
  std::error_code error;
  fs::create_directories(cache_file_.parent_path(), error);
  if (auto status = write_file_atomically(cache_file_, cache.dump(1) + "\n"); !status.ok()) {
    log::warning("could not cache architecture answers: {}", status.error().message());
  }
  return answers;
}

}  // namespace canrun::hub
