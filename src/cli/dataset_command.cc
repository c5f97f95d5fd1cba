// canrun dataset validate|show|diff|causes|migrate|push|pull: check, list, compare, explain and
// upgrade the results dataset, and publish it to (or fetch it from) a Hub dataset repo.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <memory>

#include "cli/commands.h"
#include "cli/exit_code.h"
#include "cli/table.h"
#include "core/json_output.h"
#include "core/log.h"
#include "core/model_id.h"
#include "core/scratch_dir.h"
#include "core/text.h"
#include "core/verdict_result.h"
#include "dataset/causes.h"
#include "dataset/dataset.h"
#include "dataset/diff.h"
#include "dataset/row_json.h"
#include "dataset/schema.h"
#include "hub/hf_cli.h"

namespace canrun::cli {
namespace {

namespace fs = std::filesystem;
using dataset::DatasetDir;
using dataset::StackKey;

struct DatasetOptions {
  std::string dir;
  bool json = false;
  std::string model;
  std::string result;
  std::string stack;
  std::string from;
  std::string to;
};

Status check_dataset_dir(const std::string& dir) {
  if (!fs::is_directory(dir)) {
    return not_found(fmt::format("dataset folder {} does not exist", quote_for_message(dir)));
  }
  return ok_status();
}

std::string relative_name(const fs::path& path, const DatasetDir& data) {
  return fs::relative(path, data.root()).string();
}

int run_validate(const DatasetOptions& options) {
  if (auto status = check_dataset_dir(options.dir); !status.ok()) return report(status.error());
  const DatasetDir data(options.dir);
  const auto problems = data.validate();
  const auto snapshot_files = [&] {
    std::size_t files = 0;
    std::error_code error;
    for (fs::directory_iterator it(data.data_dir(), error), end; !error && it != end;
         it.increment(error)) {
      files += !it->path().filename().string().starts_with('.');
    }
    return files;
  }();
  // Schema versions of the readable stack files: older ones are fine to read, but a folder of
  // mixed versions reads badly with pd.read_parquet(folder), so they are pointed out.
  std::map<int, std::size_t, std::greater<>> files_per_version;
  std::vector<dataset::FileVersion> older;
  nlohmann::json versions_json = nlohmann::json::array();
  for (const auto& version : data.schema_versions()) {
    if (!version.schema) continue;  // a problem, reported with the others
    ++files_per_version[version.schema->version];
    if (version.schema->version < dataset::kCurrentSchemaVersion) older.push_back(version);
    versions_json.push_back({{"file", relative_name(version.path, data)},
                             {"schema_version", version.schema->version},
                             {"recorded", version.schema->recorded}});
  }
  if (options.json) {
    nlohmann::json out = {{"files", snapshot_files},
                          {"problems", nlohmann::json::array()},
                          {"schema_version", dataset::kCurrentSchemaVersion},
                          {"versions", versions_json}};
    for (const auto& problem : problems) {
      out["problems"].push_back(
          {{"file", relative_name(problem.path, data)}, {"problem", problem.problem}});
    }
    print_json(std::cout, out);
  } else {
    for (const auto& problem : problems) {
      std::cout << relative_name(problem.path, data) << ": " << problem.problem << '\n';
    }
    for (const auto& version : older) {
      std::cout << fmt::format(
          "{}: schema version {}{}, older than {}; `canrun dataset migrate` upgrades it\n",
          relative_name(version.path, data), version.schema->version,
          version.schema->recorded ? "" : " (inferred from its columns)",
          dataset::kCurrentSchemaVersion);
    }
    std::vector<std::string> counts;
    for (const auto& [version, files] : files_per_version) {
      counts.push_back(fmt::format("{}{} in {} file{}", version,
                                   version == dataset::kCurrentSchemaVersion ? " (current)" : "",
                                   files, files == 1 ? "" : "s"));
    }
    if (!counts.empty()) {
      std::cout << fmt::format("schema version{} {}\n", counts.size() == 1 ? "" : "s",
                               fmt::join(counts, ", "));
    }
    std::cout << fmt::format("{} file{} checked, {} with problems\n", snapshot_files,
                             snapshot_files == 1 ? "" : "s", problems.size());
  }
  return problems.empty() ? kExitOk : kExitFailed;
}

int run_migrate(const DatasetOptions& options) {
  if (auto status = check_dataset_dir(options.dir); !status.ok()) return report(status.error());
  const DatasetDir data(options.dir);
  const auto steps = data.migrate();
  const int current = dataset::kCurrentSchemaVersion;
  std::size_t upgraded = 0;
  std::size_t untouched = 0;
  nlohmann::json files = nlohmann::json::array();
  for (const auto& step : steps) {
    upgraded += step.rewritten;
    untouched += !step.problem.empty();
    files.push_back(
        {{"file", relative_name(step.path, data)},
         {"from_version", step.from ? nlohmann::json(step.from->version) : nullptr},
         {"version_recorded", step.from ? nlohmann::json(step.from->recorded) : nullptr},
         {"to_version", step.problem.empty() ? nlohmann::json(current) : nullptr},
         {"rewritten", step.rewritten},
         {"problem",
          step.problem.empty() ? nlohmann::json(nullptr) : nlohmann::json(step.problem)}});
  }
  const std::size_t already = steps.size() - upgraded - untouched;
  if (options.json) {
    print_json(std::cout, {{"schema_version", current},
                           {"files", files},
                           {"upgraded", upgraded},
                           {"current", already},
                           {"problems", untouched}});
  } else {
    for (const auto& step : steps) {
      const std::string file = relative_name(step.path, data);
      if (!step.problem.empty()) {
        std::cout << fmt::format("{}: left untouched: {}\n", file, step.problem);
      } else if (step.rewritten) {
        std::cout << fmt::format(
            "{}: schema version {}{} → {}: rewritten\n", file, step.from->version,
            step.from->recorded ? "" : " (inferred from its columns)", current);
      } else {
        std::cout << fmt::format("{}: schema version {}: already current\n", file, current);
      }
    }
    std::cout << fmt::format(
        "{} file{}: {} upgraded, {} already at version {}, {} left untouched\n", steps.size(),
        steps.size() == 1 ? "" : "s", upgraded, already, current, untouched);
  }
  return untouched == 0 ? kExitOk : kExitFailed;
}

std::string seconds_cell(const std::optional<double>& seconds) {
  return seconds ? fmt::format("{:.1f}", *seconds) : "-";
}

int run_show(const DatasetOptions& options) {
  if (auto status = check_dataset_dir(options.dir); !status.ok()) return report(status.error());
  if (!options.model.empty()) {
    if (auto id = ModelId::parse(options.model); !id.ok()) return report(id.error());
  }
  const std::optional<VerdictResult> only_result =
      options.result.empty() ? std::nullopt : parse_verdict_result(options.result);
  if (!options.result.empty() && !only_result) {
    return report(
        invalid_argument(fmt::format("--result {} is not a result; use one of {}",
                                     quote_for_message(options.result), verdict_result_names())));
  }
  std::optional<StackKey> stack;
  if (!options.stack.empty()) {
    auto key = StackKey::parse(options.stack);
    if (!key.ok()) return report(key.error());
    stack = *key;
  }
  const DatasetDir data(options.dir);
  const auto snapshot = data.load_all();
  for (const auto& problem : snapshot.problems) {
    log::warning("skipped {}: {}", relative_name(problem.path, data), problem.problem);
  }
  nlohmann::json json_rows = nlohmann::json::array();
  TextTable table({"MODEL", "TASK", "STACK", "RESULT", "CORES", "RUN S", "PEAK MEM", "NOTE"});
  for (const auto& stack_table : snapshot.stacks) {
    if (stack && stack_table.key != *stack) continue;
    for (const auto& row : stack_table.rows) {
      if (!options.model.empty() && row.model_id != options.model) continue;
      if (only_result && row.result != *only_result) continue;
      if (options.json) {
        json_rows.push_back(dataset::row_to_json(row));
        continue;
      }
      std::string note = row.exclusion_reason.value_or(row.error_signature.value_or(""));
      if (note.size() > 60) note = note.substr(0, 57) + "...";
      table.add({row.model_id, row.task,
                 fmt::format("{} {} / {} {}", row.backend, row.compiler_version, row.library,
                             row.library_version),
                 std::string(to_string(row.result)), row.cores ? std::to_string(*row.cores) : "-",
                 seconds_cell(row.runtime_s),
                 row.peak_device_memory_bytes ? format_bytes(*row.peak_device_memory_bytes) : "-",
                 note});
    }
  }
  if (options.json) {
    print_json(std::cout, json_rows);
  } else if (table.size() == 0) {
    std::cout << "no rows match\n";
  } else {
    table.print(std::cout);
  }
  return kExitOk;
}

//! "PASS", "EXCLUDED (gated)", or "not tested" for no row.
std::string outcome_text(const std::optional<VerdictResult>& result,
                         const std::optional<std::string>& exclusion_reason) {
  if (!result) return "not tested";
  if (*result == VerdictResult::kExcluded && exclusion_reason) {
    return fmt::format("EXCLUDED ({})", *exclusion_reason);
  }
  return std::string(to_string(*result));
}

void print_changes(std::string_view title, const std::vector<dataset::VerdictChange>& changes) {
  std::cout << fmt::format("{} ({})\n", title, changes.size());
  for (const auto& change : changes) {
    std::cout << fmt::format("  {}  {}  {} → {}\n", change.model_id, change.task,
                             outcome_text(change.from_result, change.from_exclusion_reason),
                             outcome_text(change.to_result, change.to_exclusion_reason));
  }
}

void print_measures(std::string_view title, const std::vector<dataset::MeasureChange>& changes,
                    const std::function<std::string(const dataset::MeasureChange&)>& describe) {
  std::cout << fmt::format("{} ({})\n", title, changes.size());
  for (const auto& change : changes) {
    std::cout << fmt::format("  {}  {}  {}\n", change.model_id, change.task, describe(change));
  }
}

int run_diff(const DatasetOptions& options) {
  if (auto status = check_dataset_dir(options.dir); !status.ok()) return report(status.error());
  const DatasetDir data(options.dir);
  auto from_key = StackKey::parse(fs::path(options.from).filename().string());
  if (!from_key.ok()) return report(from_key.error().with_context("--from"));
  auto to_key = StackKey::parse(fs::path(options.to).filename().string());
  if (!to_key.ok()) return report(to_key.error().with_context("--to"));
  auto from = data.read_stack(*from_key);
  if (!from.ok()) return report(from.error().with_context("--from"));
  auto to = data.read_stack(*to_key);
  if (!to.ok()) return report(to.error().with_context("--to"));
  const auto diff = dataset::diff_stacks(*from, *to);
  if (options.json) {
    nlohmann::json out = dataset::diff_json(diff);
    out["from"] = from_key->stem();
    out["to"] = to_key->stem();
    print_json(std::cout, out);
  } else {
    std::cout << "from " << from_key->display() << "\nto   " << to_key->display() << "\n";
    print_changes("regressions", diff.regressions);
    print_changes("fixes", diff.fixes);
    print_changes("unverified, not counted as regressions", diff.unverified);
    print_changes("newly tested", diff.newly_tested);
    print_changes("no longer tested", diff.no_longer_tested);
    print_changes("other changes", diff.other_changes);
    std::cout << fmt::format("unchanged: {}\n", diff.unchanged);
    print_measures("changed plans", diff.changed_plans, [](const dataset::MeasureChange& c) {
      return fmt::format("{} core(s) {} → {} core(s) {}", c.from_cores.value_or(0),
                         c.from_parallelism.value_or("?"), c.to_cores.value_or(0),
                         c.to_parallelism.value_or("?"));
    });
    print_measures("run time changed by 20 % or more (PASS on both)", diff.run_time_changes,
                   [](const dataset::MeasureChange& c) {
                     return fmt::format("{:.1f} s → {:.1f} s", c.from_runtime_s.value_or(0),
                                        c.to_runtime_s.value_or(0));
                   });
    print_measures("peak memory changed by 20 % or more (PASS on both)", diff.memory_changes,
                   [](const dataset::MeasureChange& c) {
                     return fmt::format("{} → {}", format_bytes(c.from_memory_bytes.value_or(0)),
                                        format_bytes(c.to_memory_bytes.value_or(0)));
                   });
  }
  return diff.regressions.empty() ? kExitOk : kExitFailed;
}

//! The stack --stack names, or every stack of the dataset.
int run_causes(const DatasetOptions& options) {
  if (auto status = check_dataset_dir(options.dir); !status.ok()) return report(status.error());
  std::optional<StackKey> only;
  if (!options.stack.empty()) {
    auto key = StackKey::parse(fs::path(options.stack).filename().string());
    if (!key.ok()) return report(key.error().with_context("--stack"));
    only = *key;
  }
  const DatasetDir data(options.dir);
  // --stack: that file alone; else every stack file.
  std::vector<std::pair<StackKey, std::vector<dataset::VerdictRow>>> stacks;
  if (only) {
    auto rows = data.read_stack(*only);
    if (!rows.ok() && rows.error().code() != ErrorCode::kNotFound) return report(rows.error());
    if (!rows.ok()) {
      return report(not_found(fmt::format("--stack {}: no such stack in {}",
                                          quote_for_message(options.stack), options.dir)));
    }
    stacks.emplace_back(*only, std::move(*rows));
  } else {
    auto snapshot = data.load_all();
    for (const auto& problem : snapshot.problems) {
      log::warning("skipped {}: {}", relative_name(problem.path, data), problem.problem);
    }
    for (auto& stack : snapshot.stacks) stacks.emplace_back(stack.key, std::move(stack.rows));
  }
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [key, rows] : stacks) {
    const auto causes = dataset::failure_causes(rows);
    std::size_t failures = 0;
    for (const auto& cause : causes) failures += cause.count;
    if (options.json) {
      nlohmann::json items = nlohmann::json::array();
      for (const auto& cause : causes) {
        items.push_back({{"signature", cause.signature},
                         {"count", cause.count},
                         {"results", cause.results},
                         {"excerpt", cause.excerpt},
                         {"models", cause.models}});
      }
      out.push_back({{"stack", key.stem()}, {"failures", failures}, {"causes", items}});
      continue;
    }
    std::cout << fmt::format("{}: {} failure{} in {} cause{}\n", key.display(), failures,
                             failures == 1 ? "" : "s", causes.size(),
                             causes.size() == 1 ? "" : "s");
    for (const auto& cause : causes) {
      std::vector<std::string> results;
      for (const auto& [result, count] : cause.results) {
        results.push_back(fmt::format("{} {}", result, count));
      }
      std::cout << fmt::format("\n  {} × {}  ({})\n", cause.count, cause.signature,
                               fmt::join(results, ", "));
      constexpr std::size_t kShown = 8;
      const std::size_t shown = std::min(kShown, cause.models.size());
      std::cout << fmt::format(
          "    models: {}{}\n",
          fmt::join(cause.models.begin(), cause.models.begin() + static_cast<long>(shown), ", "),
          cause.models.size() > shown ? fmt::format(" and {} more", cause.models.size() - shown)
                                      : "");
      std::string_view rest = cause.excerpt;
      while (!rest.empty()) {
        const auto newline = rest.find('\n');
        std::cout << "    | " << rest.substr(0, newline) << '\n';
        if (newline == std::string_view::npos) break;
        rest.remove_prefix(newline + 1);
      }
    }
    std::cout << '\n';
  }
  if (options.json) print_json(std::cout, out);
  return kExitOk;
}

// --- push and pull: the dataset on the Hub, through the hf CLI ---------------------------------

struct HubOptions {
  std::string dir;
  std::string repo_uri;
  bool json = false;
};

constexpr std::string_view kDatasetScheme = "hf://datasets/";
//! What a dataset folder publishes: the stack files, the failure logs and the card. Hidden files
//! (locks, the campaign folder, partial writes) stay local.
const std::vector<std::string> kPublishedPatterns = {"data/*", "logs/*", "README.md"};
constexpr std::string_view kHiddenPattern = "*/.*";
constexpr std::chrono::hours kHfTimeout{2};

//! "hf://datasets/<namespace>/<name>" → "<namespace>/<name>".
Result<ModelId> parse_dataset_repo(std::string_view uri) {
  std::string_view rest = uri;
  if (!rest.starts_with(kDatasetScheme)) {
    return invalid_argument(
        fmt::format("{} is not a Hub dataset; expected hf://datasets/<namespace>/<name>",
                    quote_for_message(uri)));
  }
  rest.remove_prefix(kDatasetScheme.size());
  if (rest.ends_with('/')) rest.remove_suffix(1);
  auto repo = ModelId::parse(rest);
  if (!repo.ok()) {
    return invalid_argument(fmt::format("{}: {}; expected hf://datasets/<namespace>/<name>",
                                        quote_for_message(uri), repo.error().message()));
  }
  return repo;
}

//! The problems validate() finds, one "file: problem" each, for an error message.
std::string problems_text(const std::vector<dataset::FileProblem>& problems, const fs::path& root) {
  std::vector<std::string> lines;
  for (const auto& problem : problems) {
    lines.push_back(
        fmt::format("{}: {}", fs::relative(problem.path, root).string(), problem.problem));
  }
  return fmt::format("{}", fmt::join(lines, "; "));
}

//! The files a push publishes (as kPublishedPatterns and kHiddenPattern select them), relative.
std::vector<std::string> published_files(const fs::path& root) {
  std::vector<std::string> files;
  if (fs::is_regular_file(root / "README.md")) files.push_back("README.md");
  for (const char* folder : {"data", "logs"}) {
    std::error_code error;
    for (fs::recursive_directory_iterator it(root / folder, error), end; !error && it != end;
         it.increment(error)) {
      const std::string relative = it->path().lexically_relative(root).generic_string();
      if (it->is_regular_file() && relative.find("/.") == std::string::npos) {
        files.push_back(relative);
      }
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

int run_push(const HubOptions& options) {
  CANRUN_ASSIGN_OR_RETURN_EXIT(const ModelId repo, parse_dataset_repo(options.repo_uri));
  if (auto status = check_dataset_dir(options.dir); !status.ok()) return report(status.error());
  const DatasetDir data(options.dir);
  if (const auto problems = data.validate(); !problems.empty()) {
    return report(Error(ErrorCode::kFailedCheck,
                        fmt::format("not pushing {}: `canrun dataset validate` finds {} file{} "
                                    "with problems: {}",
                                    options.dir, problems.size(), problems.size() == 1 ? "" : "s",
                                    problems_text(problems, data.root()))));
  }
  const auto files = published_files(data.root());
  const std::size_t stacks = static_cast<std::size_t>(
      std::count_if(files.begin(), files.end(),
                    [](const std::string& file) { return file.starts_with("data/"); }));
  if (stacks == 0) {
    return report(invalid_argument(
        fmt::format("not pushing {}: its data/ folder holds no stack file", options.dir)));
  }
  const std::string folder = fs::absolute(data.root()).lexically_normal().string();
  std::vector<std::string> args = {"upload", repo.str(), folder, ".", "--repo-type", "dataset"};
  for (const std::string& pattern : kPublishedPatterns) {
    args.insert(args.end(), {"--include", pattern});
  }
  args.insert(args.end(), {"--exclude", std::string(kHiddenPattern), "--commit-message",
                           fmt::format("canrun dataset push: {} stack file{}", stacks,
                                       stacks == 1 ? "" : "s")});
  const auto launcher = process::make_posix_launcher();
  if (auto done = hub::run_hf(args, *launcher, kHfTimeout); !done.ok()) return report(done.error());
  if (options.json) {
    print_json(std::cout, {{"dataset", options.dir},
                           {"repo", options.repo_uri},
                           {"files", files},
                           {"stack_files", stacks}});
  } else {
    std::cout << fmt::format("pushed {} ({} file{}, {} stack file{}) to {}\n", options.dir,
                             files.size(), files.size() == 1 ? "" : "s", stacks,
                             stacks == 1 ? "" : "s", options.repo_uri);
  }
  return kExitOk;
}

int run_pull(const HubOptions& options) {
  CANRUN_ASSIGN_OR_RETURN_EXIT(const ModelId repo, parse_dataset_repo(options.repo_uri));
  // "out/dataset/" names the folder "dataset", not an empty name inside it.
  fs::path target = fs::absolute(options.dir).lexically_normal();
  if (!target.has_filename()) target = target.parent_path();
  if (fs::exists(target) && !fs::is_directory(target)) {
    return report(invalid_argument(
        fmt::format("dataset folder {} is a file, not a folder", quote_for_message(options.dir))));
  }
  // Beside the dataset folder, so each file is renamed into place on one file system.
  CANRUN_ASSIGN_OR_RETURN_EXIT(
      const ScratchDir staging,
      ScratchDir::make_in(target.parent_path(), "." + target.filename().string() + ".pull-"));
  std::vector<std::string> args = {"download", repo.str(),    "--repo-type",
                                   "dataset",  "--local-dir", staging.path().string()};
  for (const std::string& pattern : kPublishedPatterns) {
    args.insert(args.end(), {"--include", pattern});
  }
  const auto launcher = process::make_posix_launcher();
  if (auto done = hub::run_hf(args, *launcher, kHfTimeout); !done.ok()) return report(done.error());
  // What came down is checked before any of it reaches the dataset folder.
  if (const auto problems = DatasetDir(staging.path()).validate(); !problems.empty()) {
    return report(Error(
        ErrorCode::kFailedCheck,
        fmt::format("not pulling {} into {}: what it holds has {} file{} with problems: {}",
                    options.repo_uri, options.dir, problems.size(), problems.size() == 1 ? "" : "s",
                    problems_text(problems, staging.path()))));
  }
  // Each file renamed into place (atomic, same file system): the Hub's replace the local ones,
  // files only the local dataset has stay.
  const auto files = published_files(staging.path());
  std::size_t replaced = 0;
  for (const std::string& file : files) {
    std::error_code error;
    const fs::path to = target / file;
    fs::create_directories(to.parent_path(), error);
    replaced += fs::exists(to);
    if (!error) fs::rename(staging.path() / file, to, error);
    if (error) {
      return report(
          io_error(fmt::format("cannot move {} into {}: {}", file, options.dir, error.message())));
    }
  }
  const DatasetDir data(target);
  if (auto card = data.write_card(); !card.ok()) return report(card.error());
  if (const auto problems = data.validate(); !problems.empty()) {
    return report(
        Error(ErrorCode::kFailedCheck,
              fmt::format("pulled {} into {}, but the folder's own files have "
                          "problems: {}",
                          options.repo_uri, options.dir, problems_text(problems, data.root()))));
  }
  if (options.json) {
    print_json(std::cout, {{"dataset", options.dir},
                           {"repo", options.repo_uri},
                           {"files", files},
                           {"replaced", replaced}});
  } else {
    std::cout << fmt::format("pulled {} into {}: {} file{} ({} new, {} replaced)\n",
                             options.repo_uri, options.dir, files.size(),
                             files.size() == 1 ? "" : "s", files.size() - replaced, replaced);
  }
  return kExitOk;
}

}  // namespace

void register_dataset_command(const CommandRegistry& registry) {
  auto options = std::make_shared<DatasetOptions>();
  CLI::App* dataset = registry.root->add_subcommand(
      "dataset", "Check, list, compare and publish the results dataset (Parquet per stack)");
  dataset->require_subcommand(1);

  CLI::App* validate = dataset->add_subcommand(
      "validate", "Check every file under DIR/data against the schema; exit 1 on any problem");
  validate->add_option("DIR", options->dir, "Dataset folder")->required();
  validate->add_flag("--json", options->json, "Machine-readable output");
  validate->callback(
      [registry, options] { *registry.action = [options] { return run_validate(*options); }; });

  CLI::App* show = dataset->add_subcommand("show", "List verdicts, optionally filtered");
  show->add_option("DIR", options->dir, "Dataset folder")->required();
  show->add_option("--model", options->model, "Only this model id (namespace/name)");
  show->add_option("--result", options->result, "Only this result, e.g. PASS or FAIL_COMPILE");
  show->add_option("--stack", options->stack, "Only this stack (file name or its stem)");
  show->add_flag("--json", options->json, "All columns as a JSON array");
  show->callback(
      [registry, options] { *registry.action = [options] { return run_show(*options); }; });

  CLI::App* diff = dataset->add_subcommand(
      "diff",
      "Regressions, fixes, unverified, new and dropped models between two stacks; exit 1 on "
      "regressions (PASS → FAIL_*, TIMEOUT, CRASH, or excluded by the planner). PASS → "
      "REFERENCE_FAIL or another exclusion is listed as unverified and does not fail");
  diff->add_option("DIR", options->dir, "Dataset folder")->required();
  diff->add_option("--from", options->from, "Older stack (file name or its stem)")->required();
  diff->add_option("--to", options->to, "Newer stack (file name or its stem)")->required();
  diff->add_flag("--json", options->json, "Machine-readable output");
  diff->callback(
      [registry, options] { *registry.action = [options] { return run_diff(*options); }; });

  CLI::App* causes = dataset->add_subcommand(
      "causes",
      "Failure causes per stack: the rows neither PASS nor EXCLUDED grouped by error_signature, "
      "most first, each with its count, verdict kinds, models and an excerpt of one error");
  causes->add_option("DIR", options->dir, "Dataset folder")->required();
  causes->add_option("--stack", options->stack, "Only this stack (file name or its stem)");
  causes->add_flag("--json", options->json, "Machine-readable output");
  causes->callback(
      [registry, options] { *registry.action = [options] { return run_causes(*options); }; });

  CLI::App* migrate = dataset->add_subcommand(
      "migrate",
      "Rewrite every file under DIR/data of an older schema version in the current one "
      "(atomically, each); idempotent. A file that cannot be read is reported and left "
      "untouched (exit 1)");
  migrate->add_option("DIR", options->dir, "Dataset folder")->required();
  migrate->add_flag("--json", options->json, "Machine-readable output");
  migrate->callback(
      [registry, options] { *registry.action = [options] { return run_migrate(*options); }; });

  auto hub = std::make_shared<HubOptions>();
  CLI::App* push = dataset->add_subcommand(
      "push",
      "Publish DIR to a Hub dataset repo with `hf upload` (huggingface_hub): data/, logs/ and "
      "README.md, hidden files left out; creates the repo if needed, adds and replaces files, "
      "never deletes any. Refused (exit 1) when `canrun dataset validate` finds a problem");
  push->add_option("DIR", hub->dir, "Dataset folder")->required();
  push->add_option("REPO", hub->repo_uri, "hf://datasets/<namespace>/<name>")->required();
  push->add_flag("--json", hub->json, "Machine-readable output");
  push->callback([registry, hub] { *registry.action = [hub] { return run_push(*hub); }; });

  CLI::App* pull = dataset->add_subcommand(
      "pull",
      "Fetch a Hub dataset repo into DIR with `hf download` (huggingface_hub) into a folder "
      "beside DIR, validate it, then move each file into DIR: the Hub's files replace DIR's, "
      "files only DIR has stay, and the card is rewritten. Nothing reaches DIR (exit 1) when "
      "what came down has a problem");
  pull->add_option("REPO", hub->repo_uri, "hf://datasets/<namespace>/<name>")->required();
  pull->add_option("DIR", hub->dir, "Dataset folder (made if missing)")->required();
  pull->add_flag("--json", hub->json, "Machine-readable output");
  pull->callback([registry, hub] { *registry.action = [hub] { return run_pull(*hub); }; });
}

}  // namespace canrun::cli
