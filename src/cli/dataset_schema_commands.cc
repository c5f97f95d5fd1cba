// canrun dataset validate|migrate: check every file under DIR/data against the schema, and
// rewrite the files of an older schema version in the current one.
#include <fmt/format.h>

#include <functional>
#include <iostream>
#include <map>

#include "cli/dataset_commands.h"
#include "cli/exit_code.h"
#include "core/json_output.h"
#include "dataset/schema.h"

namespace canrun::cli {

namespace fs = std::filesystem;
using dataset::DatasetDir;

int run_dataset_validate(const DatasetOptions& options) {
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

int run_dataset_migrate(const DatasetOptions& options) {
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

}  // namespace canrun::cli
