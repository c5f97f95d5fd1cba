#include "hub/hf_cache.h"

#include <fmt/format.h>

#include <cctype>
#include <cstdlib>
#include <system_error>

#include "core/atomic_file.h"
#include "core/text.h"

namespace canrun::hub {
namespace {

namespace fs = std::filesystem;

std::optional<fs::path> env_path(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return fs::path(value);
}

//! `commit` as a Revision that is a commit; the error names the file it came with.
Result<Revision> parse_commit(std::string_view commit, std::string_view filename) {
  auto parsed = Revision::parse(commit);
  if (!parsed.ok() || !parsed->is_commit()) {
    return corrupt(fmt::format("the Hub's commit {} for {} is not 40 hex digits",
                               quote_for_message(commit), quote_for_message(filename)));
  }
  return parsed;
}

}  // namespace

bool is_blob_name(std::string_view text) {
  if (text.empty() || text.size() > 128) return false;
  for (const unsigned char c : text) {
    if (!std::isalnum(c) && c != '-' && c != '_') return false;
  }
  return true;
}

Status check_repo_filename(std::string_view filename) {
  const auto bad = [&](std::string_view why) {
    return invalid_argument(fmt::format("file name {} {}", quote_for_message(filename), why));
  };
  if (filename.empty()) return bad("is empty");
  if (filename.size() > 1024) return bad("is longer than 1024 characters");
  if (filename.front() == '/') return bad("is absolute");
  if (filename.find('\0') != std::string_view::npos ||
      filename.find('\\') != std::string_view::npos) {
    return bad("holds a NUL or a backslash");
  }
  std::size_t start = 0;
  while (true) {
    const std::size_t slash = filename.find('/', start);
    const std::string_view part = filename.substr(
        start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    if (part.empty() || part == "." || part == "..") return bad("has an empty, . or .. part");
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return ok_status();
}

HfCache HfCache::from_environment() {
  if (auto cache = env_path("HF_HUB_CACHE")) return HfCache(*cache);
  if (auto home = env_path("HF_HOME")) return HfCache(*home / "hub");
  if (auto xdg = env_path("XDG_CACHE_HOME")) return HfCache(*xdg / "huggingface" / "hub");
  const auto home = env_path("HOME").value_or(fs::temp_directory_path());
  return HfCache(home / ".cache" / "huggingface" / "hub");
}

fs::path HfCache::repo_dir(const ModelId& id) const { return root_ / id.cache_folder_name(); }

fs::path HfCache::blob_path(const ModelId& id, std::string_view blob_name) const {
  return repo_dir(id) / "blobs" / std::string(blob_name);
}

fs::path HfCache::blob_lock_path(const ModelId& id, std::string_view blob_name) const {
  return root_ / ".locks" / id.cache_folder_name() / (std::string(blob_name) + ".lock");
}

std::optional<std::string> HfCache::commit_of(const ModelId& id, const Revision& revision) const {
  if (revision.is_commit()) return revision.str();
  auto text = read_file(repo_dir(id) / "refs" / revision.str());
  if (!text.ok()) return std::nullopt;
  std::string commit = *text;
  while (!commit.empty() && std::isspace(static_cast<unsigned char>(commit.back()))) {
    commit.pop_back();
  }
  auto parsed = Revision::parse(commit);
  if (!parsed.ok() || !parsed->is_commit()) return std::nullopt;
  return parsed->str();
}

std::optional<fs::path> HfCache::snapshot_dir(const ModelId& id, const Revision& revision) const {
  const auto commit = commit_of(id, revision);
  if (!commit) return std::nullopt;
  fs::path dir = repo_dir(id) / "snapshots" / *commit;
  std::error_code error;
  if (!fs::is_directory(dir, error)) return std::nullopt;
  return dir;
}

std::optional<fs::path> HfCache::cached_file(const ModelId& id, const Revision& revision,
                                             std::string_view filename) const {
  if (!check_repo_filename(filename).ok()) return std::nullopt;
  const auto dir = snapshot_dir(id, revision);
  if (!dir) return std::nullopt;
  fs::path file = *dir / fs::path(std::string(filename));
  std::error_code error;
  if (!fs::is_regular_file(file, error)) return std::nullopt;  // follows the symlink
  return file;
}

std::optional<std::string> HfCache::cached_etag(const ModelId& id, const Revision& revision,
                                                std::string_view filename) const {
  const auto file = cached_file(id, revision, filename);
  if (!file) return std::nullopt;
  std::error_code error;
  const fs::path target = fs::read_symlink(*file, error);
  if (error) return std::nullopt;
  return target.filename().string();
}

Result<fs::path> HfCache::store(const ModelId& id, const Revision& revision,
                                std::string_view commit, std::string_view filename,
                                std::string_view etag, std::string_view bytes) const {
  CANRUN_RETURN_IF_ERROR(check_repo_filename(filename));
  if (!is_blob_name(etag)) {
    return corrupt(fmt::format("the Hub's ETag {} for {} is not a plain token",
                               quote_for_message(etag), quote_for_message(filename)));
  }
  CANRUN_RETURN_IF_ERROR(parse_commit(commit, filename));
  const fs::path blob = blob_path(id, etag);
  std::error_code error;
  fs::create_directories(blob.parent_path(), error);
  if (error) {
    return io_error(fmt::format("cannot create folders in the HF cache {}: {}",
                                quote_for_message(repo_dir(id).string()), error.message()));
  }
  CANRUN_RETURN_IF_ERROR(write_file_atomically(blob, bytes));
  return link(id, revision, commit, filename, etag);
}

Result<fs::path> HfCache::link(const ModelId& id, const Revision& revision, std::string_view commit,
                               std::string_view filename, std::string_view blob_name) const {
  CANRUN_RETURN_IF_ERROR(check_repo_filename(filename));
  if (!is_blob_name(blob_name)) {
    return corrupt(fmt::format("the Hub's ETag {} for {} is not a plain token",
                               quote_for_message(blob_name), quote_for_message(filename)));
  }
  CANRUN_ASSIGN_OR_RETURN(const Revision parsed_commit, parse_commit(commit, filename));
  const fs::path repo = repo_dir(id);
  const fs::path blob = blob_path(id, blob_name);
  const fs::path link = repo / "snapshots" / parsed_commit.str() / fs::path(std::string(filename));
  std::error_code error;
  fs::create_directories(link.parent_path(), error);
  if (error) {
    return io_error(fmt::format("cannot create folders in the HF cache {}: {}",
                                quote_for_message(repo.string()), error.message()));
  }
  // Relative, like huggingface_hub: ../../blobs/<etag> from snapshots/<commit>/, one more
  // ../ per folder level of the file name.
  const fs::path target = fs::relative(blob, link.parent_path(), error);
  if (error) return io_error(fmt::format("cannot relate {} to {}", blob.string(), link.string()));
  const fs::path temp_link = link.parent_path() / ("." + link.filename().string() + ".canrun-tmp");
  fs::remove(temp_link, error);
  fs::create_symlink(target, temp_link, error);
  if (!error) fs::rename(temp_link, link, error);
  if (error) {
    const std::string why = error.message();
    fs::remove(temp_link, error);
    return io_error(fmt::format("cannot link {} in the HF cache: {}", link.string(), why));
  }
  CANRUN_RETURN_IF_ERROR(write_ref(id, revision, parsed_commit.str()));
  return link;
}

Status HfCache::write_ref(const ModelId& id, const Revision& ref, std::string_view commit) const {
  if (ref.is_commit()) return ok_status();
  CANRUN_ASSIGN_OR_RETURN(const Revision parsed_commit, parse_commit(commit, "refs/" + ref.str()));
  const fs::path ref_path = repo_dir(id) / "refs" / ref.str();
  std::error_code error;
  fs::create_directories(ref_path.parent_path(), error);
  if (error) {
    return io_error(fmt::format("cannot create {} in the HF cache: {}",
                                quote_for_message(ref_path.parent_path().string()),
                                error.message()));
  }
  return write_file_atomically(ref_path, parsed_commit.str());
}

}  // namespace canrun::hub
