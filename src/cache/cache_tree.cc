#include "cache/cache_tree.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>

#include "core/text.h"

namespace canrun::cache {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kModulePrefix = "MODULE_";

//! A folder named by hex digits alone: a hash shard (TorchNeuron's ab/ and cd/) or a hash.
bool is_hash_folder(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(),
                                      [](unsigned char c) { return std::isxdigit(c) != 0; });
}

//! The version folder an entry counts under: its first folder, or the tree's own name when
//! there is none or it is a hash folder (a cache written at the root).
std::string version_of(std::string_view entry, std::string_view root_name) {
  const auto slash = entry.find('/');
  if (slash == std::string_view::npos || is_hash_folder(entry.substr(0, slash))) {
    return std::string(root_name);
  }
  return std::string(entry.substr(0, slash));
}

std::int64_t mtime_ms(fs::file_time_type time) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::file_clock::to_sys(time).time_since_epoch())
      .count();
}

}  // namespace

std::string_view entry_state_name(EntryState state) {
  switch (state) {
    case EntryState::kComplete:
      return "complete";
    case EntryState::kFailed:
      return "failed";
    case EntryState::kIncomplete:
      return "incomplete";
  }
  return "incomplete";
}

std::string entry_of(std::string_view path) {
  // Folders only: the last component is the file's own name.
  for (std::size_t start = 0, slash = path.find('/'); slash != std::string_view::npos;
       start = slash + 1, slash = path.find('/', start)) {
    if (path.substr(start, slash - start).starts_with(kModulePrefix)) {
      return std::string(path.substr(0, slash));
    }
  }
  return std::string(path);
}

bool is_write_in_progress(std::string_view path) {
  if (entry_of(path) != path) return false;  // below a MODULE_ folder: model.done decides
  const auto slash = path.rfind('/');
  const std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  return name.starts_with('.') || name.ends_with(".tmp");
}

std::string_view not_complete_reason(std::string_view entry) {
  return is_write_in_progress(entry) ? "a write in progress" : "no model.done";
}

std::map<std::string, EntryState> entry_states(const std::vector<std::string>& paths) {
  struct Marks {
    bool module = false;
    bool done = false;
    bool log = false;
    bool in_progress = false;  //!< a file of its own, the temp file of a write in progress
  };
  std::map<std::string, Marks> marks;
  for (const std::string& path : paths) {
    std::string entry = entry_of(path);
    Marks& mark = marks[entry];
    if (entry == path) {
      mark.in_progress = is_write_in_progress(path);
      continue;
    }
    mark.module = true;
    const std::string_view inside = std::string_view(path).substr(entry.size() + 1);
    mark.done |= inside == kDoneMarker;
    mark.log |= inside == kFailedLog;
  }
  std::map<std::string, EntryState> states;
  for (const auto& [entry, mark] : marks) {
    states[entry] = mark.in_progress            ? EntryState::kIncomplete
                    : !mark.module || mark.done ? EntryState::kComplete
                    : mark.log                  ? EntryState::kFailed
                                                : EntryState::kIncomplete;
  }
  return states;
}

namespace {

//! $VARIABLE made absolute when it is set and not empty, else cache_root/fallback.
fs::path root_from(const char* variable, const fs::path& cache_root, const char* fallback) {
  if (const char* env = std::getenv(variable); env != nullptr && *env != '\0') {
    return fs::absolute(env);
  }
  return cache_root / fallback;
}

}  // namespace

fs::path compile_cache_root(const fs::path& cache_root) {
  return root_from("CANRUN_COMPILE_CACHE", cache_root, "compile");
}

fs::path reference_cache_root(const fs::path& cache_root) {
  return root_from("CANRUN_REFERENCE_CACHE", cache_root, "references");
}

fs::path backend_cache_dir(const fs::path& cache_root, std::string_view backend) {
  return compile_cache_root(cache_root) / backend;
}

std::string compiler_cache_name(std::string_view compiler, std::string_view version) {
  return fmt::format("{}-{}", compiler, version);
}

fs::path compiler_cache_dir(const fs::path& cache_root, std::string_view backend,
                            std::string_view compiler, std::string_view version) {
  return backend_cache_dir(cache_root, backend) / compiler_cache_name(compiler, version);
}

fs::path local_compiler_cache_dir(const fs::path& cache_root, std::string_view backend,
                                  std::string_view compiler, std::string_view version) {
  return cache_root / "compile-local" / backend / compiler_cache_name(compiler, version);
}

Status check_cache_folder(const fs::path& root) {
  std::error_code error;
  const auto status = fs::status(root, error);
  if (!fs::exists(status)) {
    return not_found(fmt::format("cache folder {} does not exist", quote_whole(root.string())));
  }
  if (!fs::is_directory(status)) {
    return invalid_argument(fmt::format("{} is not a folder (a compile cache is a folder)",
                                        quote_whole(root.string())));
  }
  return ok_status();
}

Result<std::vector<CacheFile>> list_cache_files(const fs::path& root) {
  CANRUN_RETURN_IF_ERROR(check_cache_folder(root));
  std::error_code error;
  std::vector<CacheFile> files;
  fs::recursive_directory_iterator it(root, error), end;
  for (; !error && it != end; it.increment(error)) {
    const fs::directory_entry& entry = *it;
    if (entry.is_symlink(error) || !entry.is_regular_file(error)) continue;
    if (entry.path().filename().string().starts_with(kPartialPrefix)) continue;
    CacheFile file;
    file.path = entry.path().lexically_relative(root).generic_string();
    file.size = static_cast<std::int64_t>(entry.file_size(error));
    if (!error) file.mtime_ms = mtime_ms(entry.last_write_time(error));
    if (error) break;
    files.push_back(std::move(file));
  }
  if (error) {
    return io_error(fmt::format("cannot read cache folder {}: {}", quote_whole(root.string()),
                                error.message()));
  }
  std::sort(files.begin(), files.end(),
            [](const CacheFile& lhs, const CacheFile& rhs) { return lhs.path < rhs.path; });
  return files;
}

std::vector<VersionStats> cache_stats(const std::vector<CacheFile>& files,
                                      std::string_view root_name) {
  std::vector<std::string> paths;
  for (const CacheFile& file : files) paths.push_back(file.path);
  std::map<std::string, VersionStats> by_version;
  for (const auto& [entry, state] : entry_states(paths)) {
    VersionStats& stats = by_version[version_of(entry, root_name)];
    ++stats.entries;
    stats.complete += state == EntryState::kComplete;
    stats.failed += state == EntryState::kFailed;
    stats.incomplete += state == EntryState::kIncomplete;
  }
  for (const CacheFile& file : files) {
    by_version[version_of(entry_of(file.path), root_name)].bytes += file.size;
  }
  std::vector<VersionStats> out;
  for (auto& [version, stats] : by_version) {
    stats.version = version;
    out.push_back(std::move(stats));
  }
  return out;
}

}  // namespace canrun::cache
