#include "stack/stack.h"

#include <fmt/format.h>

#include <algorithm>

#include "task/task.h"

namespace canrun::stack {
namespace {

constexpr const char* kVersionsScript = R"(
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

std::string Stack::versions_json() const { return nlohmann::json(versions).dump(); }

Result<std::map<std::string, std::string>> probe_versions(const StackPython& python,
                                                          const std::vector<std::string>& names) {
  CANRUN_ASSIGN_OR_RETURN(nlohmann::json answer,
                          python.ask("the version probe", kVersionsScript,
                                     {nlohmann::json(names).dump()}, std::chrono::seconds(60)));
  if (!answer.is_object()) return corrupt("the version probe printed no JSON object");
  std::map<std::string, std::string> versions;
  for (const auto& [name, version] : answer.items()) {
    if (version.is_string()) versions[name] = version.get<std::string>();
  }
  return versions;
}

Result<std::string> probe_library_version(const StackPython& python) {
  CANRUN_ASSIGN_OR_RETURN(auto versions, probe_versions(python, {"transformers"}));
  const auto library = versions.find("transformers");
  if (library == versions.end()) {
    return not_found(fmt::format("the stack's Python {} has no transformers; install it there",
                                 python.python()));
  }
  return library->second;
}

Result<Stack> probe_stack(const StackPython& python, const backend::BackendProfile& profile) {
  std::vector<std::string> names = profile.packages;
  std::vector<std::string> needed = {profile.compiler_package, "transformers"};
  for (const task::TaskSpec& spec : task::tasks()) needed.emplace_back(spec.library);
  for (const std::string& name : needed) {
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  Stack stack;
  stack.python = python.python();
  CANRUN_ASSIGN_OR_RETURN(stack.versions, probe_versions(python, names));
  const auto compiler = stack.versions.find(profile.compiler_package);
  if (compiler == stack.versions.end()) {
    return not_found(
        fmt::format("the stack's Python {} has no {} (the {} backend's compiler); install it there",
                    python.python(), profile.compiler_package, profile.name));
  }
  stack.compiler_version = compiler->second;
  const auto library = stack.versions.find("transformers");
  if (library == stack.versions.end()) {
    return not_found(fmt::format("the stack's Python {} has no transformers; install it there",
                                 python.python()));
  }
  stack.library_version = library->second;
  return stack;
}

}  // namespace canrun::stack
