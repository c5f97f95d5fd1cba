#include "recipe/renderer.h"

#include <fmt/format.h>

#include <map>

#include "core/text.h"
#include "core/version.h"
#include "recipe/python_literal.h"
#include "recipe/templates.h"
#include "task/task.h"

namespace canrun::recipe {
namespace {

//! Replaces every {{NAME}} of `text`; an unknown NAME is an internal error.
Result<std::string> fill(std::string_view text, const std::map<std::string, std::string>& values) {
  std::string out;
  std::size_t at = 0;
  while (true) {
    const std::size_t open = text.find("{{", at);
    if (open == std::string_view::npos) break;
    const std::size_t close = text.find("}}", open);
    if (close == std::string_view::npos)
      return internal_error("recipe template has an unclosed {{");
    const std::string name(text.substr(open + 2, close - open - 2));
    const auto found = values.find(name);
    if (found == values.end())
      return internal_error(
          fmt::format("recipe template placeholder {{{{{}}}}} has no value", name));
    out.append(text.substr(at, open - at));
    out += found->second;
    at = close + 2;
  }
  out.append(text.substr(at));
  return out;
}

//! Replaces each {{INCLUDE _part}} with the template part recipes/_part.py (one level), and
//! each {{INCLUDE _part IF CONDITION}} with it where the plan meets the condition, else with
//! nothing: the renderer decides what a script holds, so a one-core script has no rank code.
//! A directive alone on its line takes the line's newline with it.
Result<std::string> expand_includes(std::string_view text, const RecipeRequest& request) {
  const std::map<std::string_view, bool> conditions = {
      {"CORES == 1", request.cores == 1},
      {"CORES > 1", request.cores > 1},
  };
  const std::string_view marker = "{{INCLUDE ";
  std::string out;
  std::size_t at = 0;
  for (std::size_t open = text.find(marker); open != std::string_view::npos;
       open = text.find(marker, at)) {
    const std::size_t close = text.find("}}", open);
    if (close == std::string_view::npos)
      return internal_error("recipe template has an unclosed {{INCLUDE");
    const std::string_view directive =
        text.substr(open + marker.size(), close - open - marker.size());
    const std::size_t if_at = directive.find(" IF ");
    const std::string_view name = directive.substr(0, if_at);
    bool included = true;
    if (if_at != std::string_view::npos) {
      const auto condition = conditions.find(directive.substr(if_at + 4));
      if (condition == conditions.end()) {
        return internal_error(
            fmt::format("recipe template includes {} under an unknown condition", directive));
      }
      included = condition->second;
    }
    const auto part = recipe_templates().find(name);
    if (part == recipe_templates().end() || !name.starts_with('_')) {
      return internal_error(fmt::format("recipe template includes unknown part {}", name));
    }
    out.append(text.substr(at, open - at));
    if (included) out.append(part->second);
    at = close + 2;
    if ((open == 0 || text[open - 1] == '\n') && at < text.size() && text[at] == '\n') {
      ++at;  // alone on its line: the part stands for the whole line
      if (included && !part->second.ends_with('\n')) out += '\n';
    }
  }
  out.append(text.substr(at));
  return out;
}

//! A plan the script can carry out: one core unsharded, or several with a parallelism and a
//! profile that says how ranks talk and how each is pinned.
Status check_sharding(const RecipeRequest& request, const backend::BackendProfile& profile) {
  if (request.cores < 1 || request.cores > 4096)
    return invalid_argument(fmt::format("cores {} is out of range 1..4096", request.cores));
  if ((request.cores == 1) != (request.parallelism == Parallelism::kNone)) {
    return invalid_argument(
        fmt::format("{} core(s) with parallelism {}: one core takes none, "
                    "several take tp or ep",
                    request.cores, to_string(request.parallelism)));
  }
  if (request.cores > 1 && (profile.distributed_backend.empty() || profile.pinning_env.empty())) {
    return invalid_argument(
        fmt::format("backend {} cannot run {} ranks: its profile names no distributed_backend "
                    "or no [pinning] env",
                    profile.name, request.cores));
  }
  return ok_status();
}

}  // namespace

std::vector<std::string> recipe_tasks() { return task::task_names(); }

int long_tokens_of(const RecipeRequest& request) {
  const task::TaskSpec* spec = task::find_task(request.task);
  return spec != nullptr && spec->long_generation ? request.long_tokens : 0;
}

std::string default_prompt(std::string_view task) {
  const task::TaskSpec* spec = task::find_task(task);
  return spec == nullptr ? std::string() : std::string(spec->default_prompt);
}

Status check_recipe_task(std::string_view task) {
  if (task::find_task(task) != nullptr) return ok_status();
  return invalid_argument(fmt::format("no recipe for task {}; tasks with a recipe: {}",
                                      quote_for_message(task), fmt::join(recipe_tasks(), ", ")));
}

Result<std::string> render_recipe(const RecipeRequest& request,
                                  const backend::BackendProfile& profile) {
  CANRUN_RETURN_IF_ERROR(check_recipe_task(request.task));
  const task::TaskSpec* task = task::find_task(request.task);
  const auto found = recipe_templates().find(task->recipe);
  if (found == recipe_templates().end()) {
    return internal_error(
        fmt::format("task {} has no template recipes/{}.py", task->name, task->recipe));
  }
  if (request.new_tokens < 1 || request.new_tokens > 4096) {
    return invalid_argument(fmt::format("--tokens {} is out of range 1..4096", request.new_tokens));
  }
  auto literal = [](std::string_view what, std::string_view value) -> Result<std::string> {
    auto text = python_string(value);
    if (!text.ok()) return text.error().with_context(what);
    return text;
  };
  std::map<std::string, std::string> values;
  CANRUN_ASSIGN_OR_RETURN(values["MODEL"], literal("model", request.model));
  CANRUN_ASSIGN_OR_RETURN(values["REVISION"], literal("revision", request.revision));
  CANRUN_ASSIGN_OR_RETURN(values["DTYPE"], literal("dtype", profile.dtype));
  CANRUN_ASSIGN_OR_RETURN(values["TORCH_DEVICE"], literal("torch_device", profile.torch_device));
  if (profile.compile_backend.empty()) {
    values["COMPILE_BACKEND"] = "None";
  } else {
    CANRUN_ASSIGN_OR_RETURN(values["COMPILE_BACKEND"],
                            literal("compile_backend", profile.compile_backend));
  }
  CANRUN_ASSIGN_OR_RETURN(values["COMPILE_OPTIONS"], python_bool_dict(profile.compile_options));
  CANRUN_ASSIGN_OR_RETURN(values["IMPORTS"], python_string_list(profile.imports));
  CANRUN_ASSIGN_OR_RETURN(values["PEAK_MEMORY"], literal("peak_memory", profile.peak_memory));
  CANRUN_ASSIGN_OR_RETURN(values["PACKAGES"], python_string_list(profile.packages));
  values["CACHE_ENV"] = values["CACHE_DIR"] = "None";
  if (!profile.cache_env.empty()) {
    CANRUN_ASSIGN_OR_RETURN(values["CACHE_ENV"], literal("cache env", profile.cache_env));
  }
  if (!profile.cache_default_dir.empty()) {
    CANRUN_ASSIGN_OR_RETURN(values["CACHE_DIR"],
                            literal("cache default_dir", profile.cache_default_dir));
  }
  CANRUN_ASSIGN_OR_RETURN(
      values["PROMPT"],
      literal("prompt", request.prompt.empty() ? task->default_prompt : request.prompt));
  values["NEW_TOKENS"] = std::to_string(request.new_tokens);
  if (request.long_tokens != 0 &&
      (request.long_tokens <= request.new_tokens || request.long_tokens > 4096)) {
    return invalid_argument(
        fmt::format("--long-tokens {} must be 0 (off) or more than --tokens {}, at most 4096",
                    request.long_tokens, request.new_tokens));
  }
  values["LONG_TOKENS"] = std::to_string(long_tokens_of(request));
  values["PERF"] = request.perf ? "True" : "False";
  values["EAGER_MAX_S"] = fmt::format("{}", profile.eager_max_s);
  CANRUN_ASSIGN_OR_RETURN(values["TASK"], literal("task", task->name));
  CANRUN_RETURN_IF_ERROR(check_sharding(request, profile));
  values["CORES"] = std::to_string(request.cores);
  values["PARALLELISM"] = "None";
  if (request.parallelism != Parallelism::kNone) {
    CANRUN_ASSIGN_OR_RETURN(values["PARALLELISM"],
                            literal("parallelism", to_string(request.parallelism)));
  }
  CANRUN_ASSIGN_OR_RETURN(values["DISTRIBUTED_BACKEND"],
                          literal("distributed_backend", profile.distributed_backend));
  CANRUN_ASSIGN_OR_RETURN(values["PIN_ENV"], literal("pinning env", profile.pinning_env));
  CANRUN_ASSIGN_OR_RETURN(values["PIN_SYNTAX"], literal("pinning syntax", profile.pinning_syntax));
  values["MODEL_ID"] = docstring_text(request.model_id);
  values["BACKEND_DESCRIPTION"] = docstring_text(
      profile.description.empty() ? profile.name
                                  : fmt::format("{} ({})", profile.description, profile.name));
  values["CANRUN_VERSION"] = docstring_text(kCanrunVersion);
  CANRUN_ASSIGN_OR_RETURN(std::string expanded, expand_includes(found->second, request));
  return fill(expanded, values);
}

}  // namespace canrun::recipe
