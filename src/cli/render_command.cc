// canrun render MODEL: print the run.py a test would run, without running anything.
#include <iostream>
#include <memory>

#include "backend/profile.h"
#include "cli/commands.h"
#include "cli/exit_code.h"
#include "core/model_id.h"
#include "recipe/renderer.h"
#include "run/model_source.h"

namespace canrun::cli {
namespace {

struct RenderOptions {
  recipe::RecipeRequest request;
  std::string backend = "cpu";
};

int run_render(RenderOptions& options) {
  auto profile = backend::find_profile(options.backend);
  if (!profile.ok()) return report(profile.error());
  CANRUN_ASSIGN_OR_RETURN_EXIT(auto revision, Revision::parse(options.request.revision));
  // A local folder renders as itself; anything else must be a Hub id.
  auto source = run::resolve_model(options.request.model, revision.str());
  if (source.ok()) {
    options.request.model = source->load_from;
    options.request.model_id = source->model_id;
    options.request.revision = source->revision;
  } else {
    CANRUN_ASSIGN_OR_RETURN_EXIT(auto id, ModelId::parse(options.request.model));
    options.request.model_id = id.str();
  }
  auto script = recipe::render_recipe(options.request, *profile);
  if (!script.ok()) return report(script.error());
  std::cout << *script;
  return kExitOk;
}

}  // namespace

void register_render_command(const CommandRegistry& registry) {
  auto options = std::make_shared<RenderOptions>();
  CLI::App* render = registry.root->add_subcommand(
      "render", "Print the run.py for a model and backend (runs nothing)");
  render->add_option("MODEL", options->request.model, "Hub id or local folder")->required();
  render->add_option("--backend,-b", options->backend, "Backend profile name or .toml path")
      ->capture_default_str();
  render->add_option("--revision", options->request.revision, "Branch, tag or commit")
      ->capture_default_str();
  render->add_option("--task", options->request.task, "Hub pipeline_tag of the recipe")
      ->capture_default_str();
  render->add_option("--tokens", options->request.new_tokens, "New tokens to generate")
      ->capture_default_str();
  render->add_option("--prompt", options->request.prompt, "Prompt (default: the task's)");
  render
      ->add_option("--cores", options->request.cores,
                   "Ranks the script starts (a plan's degree; see canrun plan)")
      ->capture_default_str();
  render
      ->add_option("--parallelism", options->request.parallelism,
                   "How the ranks share the model: none, tp or ep")
      ->capture_default_str();
  render->callback(
      [registry, options] { *registry.action = [options] { return run_render(*options); }; });
}

}  // namespace canrun::cli
