#include "stack/architectures.h"

#include <fmt/format.h>

#include <cctype>

#include "core/text.h"
#include "stack/stack.h"

namespace canrun::stack {
namespace {

// argv[1:] are identifiers (checked before); the answer is one JSON line.
constexpr const char* kCheckScript =
    "import json, sys\nimport transformers\n"
    "print(json.dumps({name: hasattr(transformers, name) for name in sys.argv[1:]}))\n";

}  // namespace

bool is_python_identifier(std::string_view name) {
  if (name.empty() || name.size() > 200) return false;
  if (std::isdigit(static_cast<unsigned char>(name.front()))) return false;
  for (const unsigned char c : name) {
    if (!std::isalnum(c) && c != '_') return false;
  }
  return true;
}

Result<ArchitectureAnswers> TransformersArchitectures::check(
    const std::vector<std::string>& architectures) {
  ArchitectureAnswers answers;
  CANRUN_ASSIGN_OR_RETURN(answers.library_version, probe_library_version(python_));
  if (!is_safe_name(answers.library_version)) {
    return corrupt(fmt::format("transformers version {} is not a version",
                               quote_for_message(answers.library_version)));
  }
  std::vector<std::string> ask;
  for (const auto& name : architectures) {
    if (!is_python_identifier(name)) {
      answers.known[name] = false;  // no class of transformers is named like that
    } else {
      ask.push_back(name);
    }
  }
  // The cached names answer; the rest are asked in one import, then added to the cache.
  const auto key =
      std::filesystem::path("transformers-" + answers.library_version) / "architectures.json";
  const auto answers_all = [&](const nlohmann::json& known) {
    return known.is_object() && std::all_of(ask.begin(), ask.end(), [&](const std::string& n) {
             return known.contains(n) && known[n].is_boolean();
           });
  };
  nlohmann::json stored = nlohmann::json::object();
  CANRUN_ASSIGN_OR_RETURN(
      nlohmann::json known,
      python_.cached(
          key,
          [&](const nlohmann::json& cached) {
            if (cached.is_object()) stored = cached;
            return answers_all(cached);
          },
          [&]() -> Result<nlohmann::json> {
            std::vector<std::string> missing;
            for (const auto& name : ask) {
              if (!stored.contains(name) || !stored[name].is_boolean()) missing.push_back(name);
            }
            ++imports_;
            CANRUN_ASSIGN_OR_RETURN(nlohmann::json reply,
                                    python_.ask("the architecture probe", kCheckScript, missing));
            for (const auto& name : missing) {
              if (!reply.is_object() || !reply.contains(name) || !reply[name].is_boolean()) {
                return corrupt(fmt::format("the stack's Python answered {} about {}",
                                           quote_for_message(reply.dump(), 200), name));
              }
              stored[name] = reply[name];
            }
            return stored;
          }));
  for (const auto& name : ask) answers.known[name] = known[name].get<bool>();
  return answers;
}

}  // namespace canrun::stack
