#include "run/stack.h"

#include <fmt/format.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "core/text.h"

namespace canrun::run {
namespace {

constexpr const char* kProbe = R"(
import importlib.metadata as metadata, json, platform, sys
found = {"python": platform.python_version()}
for name in json.loads(sys.argv[1]):
    try:
        found[name] = metadata.version(name)
    except metadata.PackageNotFoundError:
        pass
print(json.dumps(found))
)";

}  // namespace

std::vector<std::string> Stack::packages() const {
  std::vector<std::string> out;
  for (const auto& [name, version] : versions) {
    if (name != "python") out.push_back(fmt::format("{}=={}", name, version));
  }
  return out;
}

std::string Stack::versions_json() const { return nlohmann::json(versions).dump(); }

std::string default_python() {
  if (const char* env = std::getenv("CANRUN_PYTHON"); env != nullptr && *env != '\0') return env;
  std::error_code error;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    const auto venv = exe.parent_path().parent_path() / ".venv" / "bin" / "python";
    if (std::filesystem::exists(venv)) return venv.string();
  }
  return "python3";
}

Result<std::map<std::string, std::string>> probe_versions(const std::string& python,
                                                          const std::vector<std::string>& names,
                                                          ProcessLauncher& launcher) {
  ProcessSpec spec;
  spec.argv = {python, "-c", kProbe, nlohmann::json(names).dump()};
  spec.env = current_environment();
  spec.timeout = std::chrono::seconds(60);
  auto outcome = launcher.run(spec);
  if (!outcome.ok())
    return outcome.error().with_context(fmt::format("probing the stack of {}", python));
  if (outcome->exit_code != 0) {
    return not_found(fmt::format("the stack's Python {} failed to report its packages: {}",
                                 quote_for_message(python), outcome->stderr_tail.substr(0, 500)));
  }
  const auto json = nlohmann::json::parse(outcome->stdout_tail, nullptr, false);
  if (!json.is_object()) return corrupt("the stack probe printed no JSON object");
  std::map<std::string, std::string> versions;
  for (const auto& [name, version] : json.items()) {
    if (version.is_string()) versions[name] = version.get<std::string>();
  }
  return versions;
}

Result<Stack> probe_stack(const std::string& python, const backend::BackendProfile& profile,
                          ProcessLauncher& launcher) {
  std::vector<std::string> names = profile.packages;
  for (const std::string& needed : {profile.compiler_package, std::string("transformers")}) {
    if (std::find(names.begin(), names.end(), needed) == names.end()) names.push_back(needed);
  }
  Stack stack;
  stack.python = python;
  CANRUN_ASSIGN_OR_RETURN(stack.versions, probe_versions(python, names, launcher));
  const auto compiler = stack.versions.find(profile.compiler_package);
  if (compiler == stack.versions.end()) {
    return not_found(
        fmt::format("the stack's Python {} has no {} (the {} backend's compiler); install it there",
                    python, profile.compiler_package, profile.name));
  }
  stack.compiler_version = compiler->second;
  const auto library = stack.versions.find("transformers");
  if (library == stack.versions.end()) {
    return not_found(
        fmt::format("the stack's Python {} has no transformers; install it there", python));
  }
  stack.library_version = library->second;
  return stack;
}

}  // namespace canrun::run
