// The subcommands of `canrun dataset`, registered in dataset_command.cc: the files against the
// schema (dataset_schema_commands.cc), the verdicts listed, compared and explained
// (dataset_verdict_commands.cc), and the dataset on the Hub (dataset_hub_commands.cc). Each
// run_dataset_* returns the exit code.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "core/result.h"
#include "dataset/dataset.h"

namespace canrun::cli {

//! The options of validate, show, diff, causes and migrate (each uses its own).
struct DatasetOptions {
  std::string dir;
  bool json = false;
  std::string model;
  std::string result;
  std::string stack;
  std::string from;
  std::string to;
};

//! The options of push and pull.
struct DatasetHubOptions {
  std::string dir;
  std::string repo_uri;
  bool json = false;
};

int run_dataset_validate(const DatasetOptions& options);
int run_dataset_migrate(const DatasetOptions& options);
int run_dataset_show(const DatasetOptions& options);
int run_dataset_diff(const DatasetOptions& options);
int run_dataset_causes(const DatasetOptions& options);
int run_dataset_push(const DatasetHubOptions& options);
int run_dataset_pull(const DatasetHubOptions& options);

//! kNotFound naming `dir` when it is not a folder.
Status check_dataset_dir(const std::string& dir);

//! The stack `value` names in `data` (a file name, its stem, or a path to the file), for
//! `option` (--stack, --from, --to). When it names none, kInvalidArgument (not a stack name) or
//! kNotFound (no file of it), both exit 2, listing the stacks `data` has by those names.
Result<dataset::StackKey> stack_named(std::string_view option, const std::string& value,
                                      const dataset::DatasetDir& data);

//! `path` relative to the dataset folder, as messages name a file.
std::string relative_name(const std::filesystem::path& path, const dataset::DatasetDir& data);

}  // namespace canrun::cli
