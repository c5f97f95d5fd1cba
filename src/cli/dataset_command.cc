// canrun dataset validate|show|diff|causes|migrate|push|pull: check, list, compare, explain and
// upgrade the results dataset, and publish it to (or fetch it from) a Hub dataset repo. The
// subcommands' work is in the dataset_*_commands.cc files (dataset_commands.h).
#include <fmt/format.h>

#include <memory>

#include "cli/commands.h"
#include "cli/dataset_commands.h"
#include "core/text.h"
#include "dataset/causes.h"

namespace canrun::cli {

namespace fs = std::filesystem;

Status check_dataset_dir(const std::string& dir) {
  if (!fs::is_directory(dir)) {
    return not_found(fmt::format("dataset folder {} does not exist", quote_for_message(dir)));
  }
  return ok_status();
}

Result<dataset::StackKey> stack_named(std::string_view option, const std::string& value,
                                      const dataset::DatasetDir& data) {
  const auto listed = [&](const Error& error) {
    const std::vector<dataset::StackKey> stacks = data.stacks();
    std::string message = error.message();
    if (stacks.empty()) {
      message += fmt::format("\n{} has no stacks (no <stack>.parquet file under {})",
                             data.root().string(), data.data_dir().string());
    } else {
      message += fmt::format("\nthe stacks of {}, as {} takes them:", data.root().string(), option);
      for (const auto& stack : stacks) message += "\n  " + stack.stem();
    }
    return Error(error.code(), message);
  };
  auto key = dataset::StackKey::parse(fs::path(value).filename().string());
  if (!key.ok()) return listed(key.error().with_context(option));
  if (!fs::exists(data.file_of(*key))) {
    return listed(not_found(fmt::format("{}: no results for stack {} in {}", option, key->display(),
                                        data.root().string())));
  }
  return *key;
}

std::string relative_name(const fs::path& path, const dataset::DatasetDir& data) {
  return fs::relative(path, data.root()).string();
}

void register_dataset_command(const CommandRegistry& registry) {
  auto options = std::make_shared<DatasetOptions>();
  CLI::App* dataset = registry.root->add_subcommand(
      "dataset", "Check, list, compare and publish the results dataset (Parquet per stack)");
  dataset->require_subcommand(1);

  CLI::App* validate = dataset->add_subcommand(
      "validate", "Check every file under DIR/data against the schema; exit 1 on any problem");
  validate->add_option("DIR", options->dir, "Dataset folder")->required();
  validate->add_flag("--json", options->json, "Machine-readable output");
  validate->callback([registry, options] {
    *registry.action = [options] { return run_dataset_validate(*options); };
  });

  CLI::App* show = dataset->add_subcommand(
      "show",
      "List verdicts, optionally filtered; STACK is the name --stack, --from and --to take (the "
      "stack's file under DIR/data, without .parquet)");
  show->add_option("DIR", options->dir, "Dataset folder")->required();
  show->add_option("--model", options->model, "Only this model id (namespace/name)");
  show->add_option("--result", options->result, "Only this result, e.g. PASS or FAIL_COMPILE");
  show->add_option("--stack", options->stack,
                   "Only this stack, as the STACK column names it (or its file); one the dataset "
                   "does not have exits 2, listing those it has");
  show->add_flag("--json", options->json, "All columns as a JSON array");
  show->callback(
      [registry, options] { *registry.action = [options] { return run_dataset_show(*options); }; });

  CLI::App* diff = dataset->add_subcommand(
      "diff",
      "Regressions, fixes, unverified, new and dropped models between two stacks; exit 1 on "
      "regressions (PASS → FAIL_*, TIMEOUT, CRASH, or excluded by the planner). PASS → "
      "REFERENCE_FAIL or another exclusion is listed as unverified and does not fail");
  diff->add_option("DIR", options->dir, "Dataset folder")->required();
  diff->add_option("--from", options->from,
                   "Older stack, as the STACK column of `dataset show` names it (or its file)")
      ->required();
  diff->add_option("--to", options->to,
                   "Newer stack, as the STACK column of `dataset show` names it (or its file)")
      ->required();
  diff->add_flag("--json", options->json, "Machine-readable output");
  diff->callback(
      [registry, options] { *registry.action = [options] { return run_dataset_diff(*options); }; });

  CLI::App* causes = dataset->add_subcommand(
      "causes",
      "Failure causes per stack: the rows neither PASS nor EXCLUDED grouped by error_signature, "
      "most first, each with its count, verdict kinds, models, the model types their errors name "
      "and an excerpt of one error");
  causes->footer(std::string(dataset::kSignatureHelp) + "\n\n" + registry.root->get_footer());
  causes->add_option("DIR", options->dir, "Dataset folder")->required();
  causes->add_option(
      "--stack", options->stack,
      "Only this stack, as the STACK column of `dataset show` names it (or its file)");
  causes->add_flag("--json", options->json, "Machine-readable output");
  causes->callback([registry, options] {
    *registry.action = [options] { return run_dataset_causes(*options); };
  });

  CLI::App* migrate = dataset->add_subcommand(
      "migrate",
      "Rewrite every file under DIR/data of an older schema version in the current one "
      "(atomically, each); idempotent. A file that cannot be read is reported and left "
      "untouched (exit 1)");
  migrate->add_option("DIR", options->dir, "Dataset folder")->required();
  migrate->add_flag("--json", options->json, "Machine-readable output");
  migrate->callback([registry, options] {
    *registry.action = [options] { return run_dataset_migrate(*options); };
  });

  auto hub = std::make_shared<DatasetHubOptions>();
  CLI::App* push = dataset->add_subcommand(
      "push",
      "Publish DIR to a Hub dataset repo with `hf upload` (huggingface_hub): data/, logs/ and "
      "README.md, hidden files left out; creates the repo if needed, adds and replaces files, "
      "never deletes any. Refused (exit 1) when `canrun dataset validate` finds a problem");
  push->add_option("DIR", hub->dir, "Dataset folder")->required();
  push->add_option("REPO", hub->repo_uri, "hf://datasets/<namespace>/<name>")->required();
  push->add_flag("--json", hub->json, "Machine-readable output");
  push->callback([registry, hub] { *registry.action = [hub] { return run_dataset_push(*hub); }; });

  CLI::App* pull = dataset->add_subcommand(
      "pull",
      "Fetch a Hub dataset repo into DIR with `hf download` (huggingface_hub) into a folder "
      "beside DIR, validate it, then move each file into DIR: the Hub's files replace DIR's, "
      "files only DIR has stay, and the card is rewritten. Nothing reaches DIR (exit 1) when "
      "what came down has a problem");
  pull->add_option("REPO", hub->repo_uri, "hf://datasets/<namespace>/<name>")->required();
  pull->add_option("DIR", hub->dir, "Dataset folder (made if missing)")->required();
  pull->add_flag("--json", hub->json, "Machine-readable output");
  pull->callback([registry, hub] { *registry.action = [hub] { return run_dataset_pull(*hub); }; });
}

}  // namespace canrun::cli
