// Renders run.py (SPEC.md §6) for one model, task and backend profile from the task's template
// (task::TaskSpec::recipe, recipes/<recipe>.py), compiled into the binary. {{INCLUDE _part}}
// pulls in the shared part recipes/_part.py, so each rendered script stays one self-contained
// file; {{INCLUDE _part IF CORES > 1}} (or IF CORES == 1) only for such a plan, so a one-core
// script holds nothing about ranks and a sharded one starts its own (recipes/_ranks.py).
// Placeholders {{NAME}} become Python literals (python_literal.h) or, in the docstring,
// sanitised text; a template placeholder left unfilled is an internal error, never silently
// kept.
//
// Thread safety: free functions over immutable data.
#pragma once

#include <string>
#include <vector>

#include "backend/profile.h"
#include "core/parallelism.h"
#include "core/result.h"

namespace canrun::recipe {

inline constexpr int kDefaultNewTokens = 32;
//! --long-tokens: the long generation's tokens, for the tasks that generate long answers
//! (task::TaskSpec::long_generation); 0 turns it off.
inline constexpr int kDefaultLongTokens = 128;

//! The prompt a task's recipe uses unless one is given; empty for an unknown task.
std::string default_prompt(std::string_view task);

struct RecipeRequest {
  std::string model;     //!< what from_pretrained gets: a Hub id or a local folder
  std::string model_id;  //!< the Hub id the script is about (for its docstring)
  std::string revision = "main";
  std::string task = "text-generation";
  std::string prompt;  //!< empty: default_prompt(task)
  int new_tokens = kDefaultNewTokens;
  //! 0, or more than new_tokens: the compiled model then generates this many after the check
  //! (the task's, when it has a long generation; other tasks' scripts get 0).
  int long_tokens = kDefaultLongTokens;
  //! The eager baseline before the compiled run (--no-perf: false).
  bool perf = true;
  int cores = 1;  //!< ranks the script starts (the plan's degree)
  Parallelism parallelism = Parallelism::kNone;
};

//! The long generation's tokens a script of `request` makes: request.long_tokens for a task with
//! a long generation, else 0.
int long_tokens_of(const RecipeRequest& request);

//! The tasks with a recipe: the registered tasks (task::task_names()).
std::vector<std::string> recipe_tasks();

//! kInvalidArgument "no recipe for task …; tasks with a recipe: …" unless `task` has one.
Status check_recipe_task(std::string_view task);

//! The script; kInvalidArgument for a task without a template, a value that cannot be placed
//! (not UTF-8), or a sharded plan the profile cannot pin (no pinning rule), naming it.
Result<std::string> render_recipe(const RecipeRequest& request,
                                  const backend::BackendProfile& profile);

}  // namespace canrun::recipe
