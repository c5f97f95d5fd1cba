#include "cache/sync.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <utility>

#include "core/atomic_file.h"
#include "core/json_fields.h"
#include "core/json_output.h"
#include "core/log.h"
#include "core/model_id.h"
#include "core/scratch_dir.h"
#include "core/text.h"
#include "hub/hf_cli.h"

namespace canrun::cache {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kBucketScheme = "hf://buckets/";
constexpr std::string_view kFileScheme = "file://";
//! A bucket sync moves whole compile caches: allow it hours.
constexpr std::chrono::hours kHfTimeout{12};

Result<CacheLocation> parse_bucket(std::string_view text) {
  std::string_view rest = text.substr(kBucketScheme.size());
  while (rest.ends_with('/')) rest.remove_suffix(1);
  const auto bad = [&](std::string_view why) {
    return invalid_argument(fmt::format("{}: {}; expected hf://buckets/<namespace>/<bucket>/<path>",
                                        quote_whole(text), why));
  };
  const auto first = rest.find('/');
  if (first == std::string_view::npos) return bad("no bucket name");
  const auto second = rest.find('/', first + 1);
  const std::string_view id = rest.substr(0, second);
  if (auto parsed = ModelId::parse(id); !parsed.ok()) {
    return bad(fmt::format("bad bucket id: {}", parsed.error().message()));
  }
  if (second != std::string_view::npos) {
    std::string_view path = rest.substr(second + 1);
    while (!path.empty()) {
      const std::string_view part = path.substr(0, path.find('/'));
      if (part.empty() || part == "." || part == "..") {
        return bad("its path has an empty, '.' or '..' component");
      }
      path.remove_prefix(std::min(path.size(), part.size() + 1));
    }
  }
  CacheLocation location;
  location.kind = CacheLocation::Kind::kBucket;
  location.text = std::string(text);
  location.bucket_uri = std::string(kBucketScheme) + std::string(rest);
  return location;
}

//! A folder's path without a trailing '/': "cache/" and "cache" name the same folder.
fs::path folder_path(std::string_view text) {
  fs::path path = fs::path(text).lexically_normal();
  return path.has_filename() || !path.has_relative_path() ? path : path.parent_path();
}

Error fs_error(std::string_view doing, const fs::path& path, const std::error_code& error) {
  return io_error(fmt::format("cannot {} {}: {}", doing, path.string(), error.message()));
}

//! `from` copied to `to` through a hidden partial file beside `to`, synced, given `from`'s
//! modification time, then renamed into place: a reader sees the old file or the whole new one.
Status copy_file_atomically(const fs::path& from, const fs::path& to) {
  std::error_code error;
  fs::create_directories(to.parent_path(), error);
  if (error) return fs_error("create folder", to.parent_path(), error);
  const fs::path partial =
      to.parent_path() / fmt::format("{}{}-{}", kPartialPrefix, ::getpid(), to.filename().string());
  const auto fail = [&](std::string_view doing, const fs::path& path) {
    std::error_code ignored;
    fs::remove(partial, ignored);
    return fs_error(doing, path, error);
  };
  if (!fs::copy_file(from, partial, fs::copy_options::overwrite_existing, error)) {
    return fail("copy", from);
  }
  if (const int fd = ::open(partial.c_str(), O_RDONLY | O_CLOEXEC); fd >= 0) {
    const bool synced = ::fsync(fd) == 0;
    ::close(fd);
    if (!synced) {
      error = std::error_code(errno, std::generic_category());
      return fail("sync", partial);
    }
  }
  const auto mtime = fs::last_write_time(from, error);
  if (!error) fs::last_write_time(partial, mtime, error);
  if (error) return fail("set the modification time of", partial);
  fs::rename(partial, to, error);
  if (error) return fail("rename into place", to);
  return ok_status();
}

//! Removes `path`, then each folder above it that is left empty, up to `root`.
Status remove_and_prune(const fs::path& root, const fs::path& path) {
  std::error_code error;
  fs::remove(path, error);
  if (error) return fs_error("delete", path, error);
  for (fs::path folder = path.parent_path(); folder != root && folder.has_relative_path();
       folder = folder.parent_path()) {
    if (!fs::is_empty(folder, error) || error) break;
    fs::remove(folder, error);
  }
  return ok_status();
}

//! The destination's files; none when it does not exist yet.
Result<std::vector<CacheFile>> destination_files(const fs::path& destination) {
  std::error_code error;
  if (!fs::exists(destination, error)) return std::vector<CacheFile>{};
  auto files = list_cache_files(destination);
  if (!files.ok()) return files.error().with_context("destination");
  return files;
}

//! `path` absolute, its links resolved as far as it exists.
fs::path resolved(const fs::path& path) {
  std::error_code error;
  const fs::path absolute = fs::absolute(path, error);
  const fs::path canonical = fs::weakly_canonical(absolute, error);
  return (error ? absolute : canonical).lexically_normal();
}

Status check_not_nested(const fs::path& source, const fs::path& destination) {
  const fs::path from = resolved(source);
  const fs::path to = resolved(destination);
  const fs::path inside = to.lexically_relative(from);
  if (!inside.empty() && *inside.begin() != "..") {
    return invalid_argument(
        fmt::format("destination {} is the source {} or inside it; sync into another folder",
                    quote_whole(destination.string()), quote_whole(source.string())));
  }
  return ok_status();
}

Result<SyncPlan> sync_local(const SyncRequest& request) {
  const fs::path& source = request.source.local;
  const fs::path& destination = request.destination.local;
  auto source_files = list_cache_files(source);
  if (!source_files.ok()) return source_files.error().with_context("source");
  CANRUN_RETURN_IF_ERROR(check_not_nested(source, destination));
  CANRUN_ASSIGN_OR_RETURN(const auto existing, destination_files(destination));
  SyncPlan plan = plan_sync(compare_files(*source_files, existing, request.delete_extra));
  if (request.dry_run) return plan;
  for (const SyncStep& step : plan.steps) {
    if (step.action == SyncAction::kCopy) {
      log::debug("copy {} ({})", step.path, step.reason);
      CANRUN_RETURN_IF_ERROR(copy_file_atomically(source / step.path, destination / step.path));
    } else if (step.action == SyncAction::kDelete) {
      log::debug("delete {} ({})", step.path, step.reason);
      CANRUN_RETURN_IF_ERROR(remove_and_prune(destination, destination / step.path));
    }
  }
  return plan;
}

//! A side as `hf buckets sync` takes it: the bucket URI, or the local folder made absolute.
std::string hf_argument(const CacheLocation& location) {
  return location.is_bucket() ? location.bucket_uri
                              : fs::absolute(location.local).lexically_normal().string();
}

//! The actions of `hf buckets sync` plans: upload or download is a copy, whichever way it goes.
const std::map<std::string, SyncAction, std::less<>> kHfActions = {{"upload", SyncAction::kCopy},
                                                                   {"download", SyncAction::kCopy},
                                                                   {"delete", SyncAction::kDelete},
                                                                   {"skip", SyncAction::kSkip}};

//! The operations of a plan file `hf buckets sync --plan` wrote, as steps, in file order, and
//! the JSON of each line (the header first).
struct HfPlan {
  std::vector<nlohmann::json> lines;
  std::vector<SyncStep> steps;  //!< one per operation line, lines[idx + 1]
};

Result<HfPlan> read_hf_plan(const fs::path& file) {
  CANRUN_ASSIGN_OR_RETURN(const std::string text, read_file(file));
  HfPlan plan;
  std::istringstream in(text);
  std::string line;
  for (int line_number = 1; std::getline(in, line); ++line_number) {
    if (line.empty()) continue;
    const std::string where =
        fmt::format("the plan `hf buckets sync --plan` wrote, line {}", line_number);
    const auto bad = [&](std::string_view why) {
      return corrupt(fmt::format("{}: {}", where, why));
    };
    nlohmann::json json = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!json.is_object()) return bad("not a JSON object");
    std::string type;
    CANRUN_RETURN_IF_ERROR(read_json_string(json, where, "type", type));
    if (plan.lines.empty() != (type == "header")) return bad("a header comes first, and once");
    if (type == "operation") {
      SyncStep step;
      CANRUN_ASSIGN_OR_RETURN(const std::string action,
                              required_json_string(json, where, "action"));
      const auto found = kHfActions.find(action);
      if (found == kHfActions.end()) return bad(fmt::format("unknown action {}", action));
      step.action = found->second;
      CANRUN_ASSIGN_OR_RETURN(step.path, required_json_string(json, where, "path"));
      CANRUN_RETURN_IF_ERROR(read_json_integer(json, where, "size", step.size));
      CANRUN_RETURN_IF_ERROR(read_json_string(json, where, "reason", step.reason));
      plan.steps.push_back(std::move(step));
    } else if (type != "header") {
      continue;  // a line kind newer than canrun: not an operation
    }
    plan.lines.push_back(std::move(json));
  }
  if (plan.lines.empty()) return corrupt("`hf buckets sync --plan` wrote an empty plan");
  return plan;
}

Result<SyncPlan> sync_with_bucket(const SyncRequest& request, process::ProcessLauncher& launcher) {
  if (!request.source.is_bucket()) {
    if (auto folder = check_cache_folder(request.source.local); !folder.ok()) {
      return folder.error().with_context("source");
    }
  } else if (fs::exists(request.destination.local) &&
             !fs::is_directory(request.destination.local)) {
    return invalid_argument(fmt::format("destination {} is not a folder",
                                        quote_whole(request.destination.local.string())));
  }
  CANRUN_ASSIGN_OR_RETURN(const ScratchDir scratch,
                          ScratchDir::make_in(fs::temp_directory_path(), "canrun-cache-sync-"));
  const fs::path full_plan = scratch.path() / "plan.jsonl";
  std::vector<std::string> args = {"buckets", "sync", hf_argument(request.source),
                                   hf_argument(request.destination)};
  if (request.delete_extra) args.push_back("--delete");
  // The partial copies of a local sync into the same folder are not part of the cache.
  args.insert(args.end(),
              {"--exclude", fmt::format("*{}*", kPartialPrefix), "--plan", full_plan.string()});
  CANRUN_RETURN_IF_ERROR(hub::run_hf(args, launcher, kHfTimeout));
  CANRUN_ASSIGN_OR_RETURN(HfPlan hf_plan, read_hf_plan(full_plan));
  SyncPlan plan = plan_sync(hf_plan.steps);
  if (request.dry_run || plan.count(SyncAction::kCopy) + plan.count(SyncAction::kDelete) == 0) {
    return plan;
  }
  // The plan hf made, less what the entry rules left out, applied by hf.
  std::set<std::pair<SyncAction, std::string>> kept;
  for (const SyncStep& step : plan.steps) kept.emplace(step.action, step.path);
  std::string text = to_json_text(hf_plan.lines.front(), -1) + "\n";
  for (std::size_t idx = 0; idx < hf_plan.steps.size(); ++idx) {
    const SyncStep& step = hf_plan.steps[idx];
    if (step.action == SyncAction::kSkip || !kept.contains({step.action, step.path})) continue;
    text += to_json_text(hf_plan.lines[idx + 1], -1) + "\n";
  }
  const fs::path kept_plan = scratch.path() / "plan-complete-entries.jsonl";
  CANRUN_RETURN_IF_ERROR(write_file_atomically(kept_plan, text));
  CANRUN_RETURN_IF_ERROR(
      hub::run_hf({"buckets", "sync", "--apply", kept_plan.string()}, launcher, kHfTimeout));
  return plan;
}

}  // namespace

Result<CacheLocation> parse_location(std::string_view text) {
  if (text.empty()) return invalid_argument("an empty location; give a folder or hf://buckets/...");
  if (text.starts_with(kBucketScheme)) return parse_bucket(text);
  if (text.starts_with("hf://")) {
    return invalid_argument(fmt::format(
        "{}: compile caches live in Storage Buckets, hf://buckets/<namespace>/<bucket>/<path>",
        quote_whole(text)));
  }
  CacheLocation location;
  location.text = std::string(text);
  if (text.starts_with(kFileScheme)) {
    std::string_view rest = text.substr(kFileScheme.size());
    if (rest.starts_with("localhost/")) rest.remove_prefix(std::string_view("localhost").size());
    if (!rest.starts_with('/')) {
      return invalid_argument(fmt::format(
          "{}: a file:// URL names a local absolute path (file:///PATH); this one names host {}",
          quote_whole(text), quote_whole(rest.substr(0, rest.find('/')))));
    }
    location.local = folder_path(rest);
    return location;
  }
  if (const auto scheme = text.find("://"); scheme != std::string_view::npos) {
    return invalid_argument(
        fmt::format("{}: not a location canrun can sync; give a folder, file:///PATH or "
                    "hf://buckets/<namespace>/<bucket>/<path>",
                    quote_whole(text)));
  }
  location.local = folder_path(text);
  return location;
}

Result<SyncPlan> sync_cache(const SyncRequest& request, process::ProcessLauncher& launcher) {
  if (request.source.is_bucket() && request.destination.is_bucket()) {
    return invalid_argument(fmt::format(
        "both {} and {} are buckets; one side must be a local folder (hf buckets sync copies "
        "between a folder and a bucket)",
        quote_whole(request.source.text), quote_whole(request.destination.text)));
  }
  if (request.source.is_bucket() || request.destination.is_bucket()) {
    return sync_with_bucket(request, launcher);
  }
  return sync_local(request);
}

}  // namespace canrun::cache
