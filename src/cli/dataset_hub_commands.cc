// canrun dataset push|pull: the dataset on the Hub, through the hf CLI (huggingface_hub).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <iostream>

#include "cli/dataset_commands.h"
#include "cli/exit_code.h"
#include "core/json_output.h"
#include "core/model_id.h"
#include "core/scratch_dir.h"
#include "core/text.h"
#include "hub/hf_cli.h"

namespace canrun::cli {
namespace {

namespace fs = std::filesystem;
using dataset::DatasetDir;

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
std::string problems_text(const std::vector<dataset::FileProblem>& problems,
                          const DatasetDir& data) {
  std::vector<std::string> lines;
  for (const auto& problem : problems) {
    lines.push_back(fmt::format("{}: {}", relative_name(problem.path, data), problem.problem));
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

}  // namespace

int run_dataset_push(const DatasetHubOptions& options) {
  CANRUN_ASSIGN_OR_RETURN_EXIT(const ModelId repo, parse_dataset_repo(options.repo_uri));
  if (auto status = check_dataset_dir(options.dir); !status.ok()) return report(status.error());
  const DatasetDir data(options.dir);
  if (const auto problems = data.validate(); !problems.empty()) {
    return report(Error(ErrorCode::kFailedCheck,
                        fmt::format("not pushing {}: `canrun dataset validate` finds {} file{} "
                                    "with problems: {}",
                                    options.dir, problems.size(), problems.size() == 1 ? "" : "s",
                                    problems_text(problems, data))));
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

int run_dataset_pull(const DatasetHubOptions& options) {
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
  const DatasetDir staged(staging.path());
  if (const auto problems = staged.validate(); !problems.empty()) {
    return report(
        Error(ErrorCode::kFailedCheck,
              fmt::format("not pulling {} into {}: what it holds has {} file{} with problems: {}",
                          options.repo_uri, options.dir, problems.size(),
                          problems.size() == 1 ? "" : "s", problems_text(problems, staged))));
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
    return report(Error(ErrorCode::kFailedCheck,
                        fmt::format("pulled {} into {}, but the folder's own files have "
                                    "problems: {}",
                                    options.repo_uri, options.dir, problems_text(problems, data))));
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

}  // namespace canrun::cli
