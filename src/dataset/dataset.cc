#include "dataset/dataset.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "core/atomic_file.h"
#include "core/log.h"
#include "core/model_id.h"
#include "core/parallel.h"
#include "core/text.h"
#include "dataset/card.h"

namespace canrun::dataset {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kMaxRowProblemsPerFile = 5;

//! A good-looking stack file under data/ (the name parses), or a problem with the entry.
struct Entry {
  fs::path path;
  std::optional<StackKey> key;
  std::string problem;
};

//! Every visible entry of data/, sorted by name. Hidden files (a writer's temp file) are not
//! part of the dataset and are skipped.
std::vector<Entry> list_entries(const fs::path& data_dir) {
  std::vector<Entry> entries;
  std::error_code error;
  for (fs::directory_iterator it(data_dir, error), end; !error && it != end; it.increment(error)) {
    const fs::path& path = it->path();
    const std::string name = path.filename().string();
    if (name.starts_with('.')) continue;
    Entry entry{path, std::nullopt, ""};
    if (it->is_directory()) {
      entry.problem = "a folder; data/ holds only <stack>.parquet files";
    } else if (!name.ends_with(".parquet")) {
      entry.problem = "not a dataset file: only <stack>.parquet files belong in data/";
    } else if (auto key = StackKey::parse(name); !key.ok()) {
      entry.problem = key.error().message();
    } else {
      entry.key = std::move(*key);
    }
    entries.push_back(std::move(entry));
  }
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.path < b.path; });
  return entries;
}

using RowKey = std::pair<std::string, std::string>;  // (model_id, task)

fs::path lock_path(const fs::path& root, const StackKey& key) {
  return root / ".locks" / (key.stem() + ".lock");
}

}  // namespace

Result<fs::path> log_relative_path(const VerdictRow& row) {
  CANRUN_ASSIGN_OR_RETURN(const StackKey key, stack_key_of(row));
  CANRUN_ASSIGN_OR_RETURN(const ModelId id, ModelId::parse(row.model_id));
  // A task is a Hub pipeline tag; nothing else becomes a file name.
  if (row.task.empty() ||
      row.task.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") != std::string::npos) {
    return invalid_argument(fmt::format("task {} is not a task name", quote_for_message(row.task)));
  }
  return fs::path("logs") / key.stem() / id.owner() / id.name() / (row.task + ".log");
}

namespace {

bool is_image_role(std::string_view role) {
  return std::find(std::begin(kImageRoles), std::end(kImageRoles), role) != std::end(kImageRoles);
}

}  // namespace

std::string_view output_file_extension(std::string_view role) {
  return role == kInputAudioRole ? "wav" : "png";
}

std::string_view output_file_media_type(std::string_view role) {
  return role == kInputAudioRole ? "audio/wav" : "image/png";
}

Result<fs::path> image_relative_path(const VerdictRow& row, std::string_view role) {
  if (!is_image_role(role)) {
    return invalid_argument(fmt::format("{} is not an image role", quote_for_message(role)));
  }
  CANRUN_ASSIGN_OR_RETURN(fs::path log, log_relative_path(row));  // the same checks, and place
  fs::path out = fs::path("images");
  for (auto part = std::next(log.begin()); part != log.end(); ++part) out /= *part;
  return out.replace_filename(fmt::format("{}.{}.{}", row.task, role, output_file_extension(role)));
}

Status name_output_files(VerdictRow& row, const std::map<std::string, fs::path>& images) {
  nlohmann::json files = nlohmann::json::object();
  for (const auto& [role, source] : images) {
    std::error_code error;
    const std::uintmax_t size = fs::file_size(source, error);
    if (error || size > kMaxImageBytes || !is_image_role(role)) continue;
    CANRUN_ASSIGN_OR_RETURN(const fs::path relative, image_relative_path(row, role));
    files[role] = relative.generic_string();
  }
  if (files.empty()) {
    row.output_files.reset();
  } else {
    row.output_files = files.dump();
  }
  return ok_status();
}

Status DatasetDir::record_images(const VerdictRow& row,
                                 const std::map<std::string, fs::path>& images) const {
  const auto named = nlohmann::json::parse(row.output_files.value_or("{}"), nullptr, false);
  for (const std::string_view role : kImageRoles) {
    CANRUN_ASSIGN_OR_RETURN(const fs::path relative, image_relative_path(row, role));
    const fs::path path = root_ / relative;
    const auto source = images.find(std::string(role));
    std::error_code error;
    if (!named.is_object() || !named.contains(role) || source == images.end()) {
      fs::remove(path, error);  // an earlier verdict's image
      if (error)
        return io_error(fmt::format("cannot remove {}: {}", path.string(), error.message()));
      continue;
    }
    fs::create_directories(path.parent_path(), error);
    if (error) {
      return io_error(
          fmt::format("cannot create {}: {}", path.parent_path().string(), error.message()));
    }
    CANRUN_ASSIGN_OR_RETURN(const std::string bytes, read_file(source->second));
    CANRUN_RETURN_IF_ERROR(write_file_atomically(path, bytes));
  }
  return ok_status();
}

bool keeps_log(const VerdictRow& row) {
  return row.result != VerdictResult::kPass && row.result != VerdictResult::kExcluded;
}

Status DatasetDir::record_log(const VerdictRow& row, std::string_view log) const {
  CANRUN_ASSIGN_OR_RETURN(const fs::path relative, log_relative_path(row));
  const fs::path path = root_ / relative;
  if (!keeps_log(row) || log.empty()) {
    std::error_code error;
    fs::remove(path, error);
    if (error) return io_error(fmt::format("cannot remove {}: {}", path.string(), error.message()));
    return ok_status();
  }
  std::error_code error;
  fs::create_directories(path.parent_path(), error);
  if (error) {
    return io_error(
        fmt::format("cannot create {}: {}", path.parent_path().string(), error.message()));
  }
  return write_file_atomically(path, keep_tail(make_valid_utf8(log), kMaxLogBytes));
}

Status DatasetDir::upsert(std::vector<VerdictRow> rows) const {
  if (rows.empty()) return ok_status();
  CANRUN_ASSIGN_OR_RETURN(StackKey key, stack_key_of(rows.front()));
  for (VerdictRow& row : rows) {
    apply_storage_policy(row);
    CANRUN_RETURN_IF_ERROR(check_row(row));
    CANRUN_ASSIGN_OR_RETURN(StackKey row_key, stack_key_of(row));
    if (row_key != key) {
      return invalid_argument(fmt::format("rows of two stacks in one write: {} and {}",
                                          key.display(), row_key.display()));
    }
  }
  std::error_code error;
  fs::create_directories(data_dir(), error);
  if (error)
    return io_error(fmt::format("cannot create {}: {}", data_dir().string(), error.message()));

  {
    CANRUN_ASSIGN_OR_RETURN(FileLock lock, FileLock::acquire(lock_path(root_, key)));
    const fs::path path = file_of(key);
    std::vector<VerdictRow> merged;
    std::optional<std::string> current;  // the file's bytes as they are, read once
    if (fs::exists(path)) {
      CANRUN_ASSIGN_OR_RETURN(current, read_file(path));
      auto stored = decode_parquet(*current);
      if (!stored.ok()) {
        return corrupt(fmt::format(
            "{}: {}; not overwriting it, since its rows would be lost (move it aside first)",
            path.string(), stored.error().message()));
      }
      merged = std::move(stored->rows);
    }
    std::map<RowKey, std::size_t> index;
    for (std::size_t idx = 0; idx < merged.size(); ++idx) {
      index[{merged[idx].model_id, merged[idx].task}] = idx;
    }
    for (VerdictRow& row : rows) {
      const auto [found, inserted] = index.try_emplace({row.model_id, row.task}, merged.size());
      if (inserted) {
        merged.push_back(std::move(row));
      } else if (merged[found->second].started_at <= row.started_at) {
        merged[found->second] = std::move(row);
      } else {
        log::debug("kept the newer stored verdict of {} ({})", row.model_id, row.task);
      }
    }
    std::sort(merged.begin(), merged.end(), [](const VerdictRow& a, const VerdictRow& b) {
      return std::tie(a.model_id, a.task) < std::tie(b.model_id, b.task);
    });
    CANRUN_ASSIGN_OR_RETURN(std::string bytes, encode_parquet(merged));
    // Rows written again as they are (a campaign's verdicts that stood) leave the file alone:
    // readers that watch it (the Space, a sync) see no change where there is none.
    if (current != bytes) {
      CANRUN_RETURN_IF_ERROR(write_file_atomically(path, bytes));
    }
  }
  // The folder keeps one schema version: upgrade the files older than the one just written.
  // Each under its own lock, after releasing this stack's, so two writers never wait on each
  // other's locks.
  for (const Entry& entry : list_entries(data_dir())) {
    if (!entry.key || *entry.key == key) continue;
    auto schema = read_file_schema(entry.path);
    if (!schema.ok() || schema->version >= kCurrentSchemaVersion) continue;
    if (auto upgrade = upgrade_file(*entry.key, /*record_version=*/false); !upgrade.ok()) {
      log::warning("{}: not upgraded to schema version {}: {}", entry.path.string(),
                   kCurrentSchemaVersion, upgrade.error().message());
    } else if (upgrade->rewritten) {
      log::info("{}: upgraded from schema version {} to {}", entry.path.string(),
                upgrade->before.version, kCurrentSchemaVersion);
    }
  }
  return write_card();
}

Result<DatasetDir::Upgrade> DatasetDir::upgrade_file(const StackKey& key,
                                                     bool record_version) const {
  CANRUN_ASSIGN_OR_RETURN(FileLock lock, FileLock::acquire(lock_path(root_, key)));
  const fs::path path = file_of(key);
  // Read under the lock: another writer may have upgraded or replaced it since it was listed.
  CANRUN_ASSIGN_OR_RETURN(StoredRows stored, read_parquet_file(path));
  Upgrade upgrade{stored.schema, false};
  const bool current = stored.schema.version == kCurrentSchemaVersion;
  if (current && (stored.schema.recorded || !record_version)) return upgrade;
  CANRUN_ASSIGN_OR_RETURN(std::string bytes, encode_parquet(stored.rows));
  CANRUN_RETURN_IF_ERROR(write_file_atomically(path, bytes));
  upgrade.rewritten = true;
  return upgrade;
}

std::vector<FileVersion> DatasetDir::schema_versions() const {
  std::vector<FileVersion> versions;
  for (const Entry& entry : list_entries(data_dir())) {
    if (!entry.key) continue;
    auto schema = read_file_schema(entry.path);
    if (schema.ok()) {
      versions.push_back({entry.path, *schema, ""});
    } else {
      versions.push_back({entry.path, std::nullopt, schema.error().message()});
    }
  }
  return versions;
}

std::vector<MigrationStep> DatasetDir::migrate() const {
  std::vector<MigrationStep> steps;
  if (!fs::is_directory(data_dir())) {
    steps.push_back({data_dir(), std::nullopt, false, "no data/ folder: not a canrun dataset"});
    return steps;
  }
  bool rewrote = false;
  for (const Entry& entry : list_entries(data_dir())) {
    MigrationStep step{entry.path, std::nullopt, false, entry.problem};
    if (entry.key) {
      auto upgrade = upgrade_file(*entry.key, /*record_version=*/true);
      if (upgrade.ok()) {
        step.from = upgrade->before;
        step.rewritten = upgrade->rewritten;
        rewrote = rewrote || upgrade->rewritten;
      } else {
        step.problem = upgrade.error().message();
      }
    }
    steps.push_back(std::move(step));
  }
  if (rewrote) {
    if (auto status = write_card(); !status.ok()) {
      steps.push_back({root_ / "README.md", std::nullopt, false, status.error().message()});
    }
  }
  return steps;
}

Result<std::vector<VerdictRow>> DatasetDir::read_stack(const StackKey& key) const {
  const fs::path path = file_of(key);
  if (!fs::exists(path)) {
    return not_found(
        fmt::format("no results for stack {} ({} does not exist)", key.display(), path.string()));
  }
  auto rows = read_parquet_rows(path);
  if (!rows.ok()) return rows.error().with_context(path.string());
  return rows;
}

DatasetSnapshot DatasetDir::load_all() const {
  const std::vector<Entry> entries = list_entries(data_dir());
  std::vector<std::optional<StackTable>> tables(entries.size());
  std::vector<std::string> problems(entries.size());
  parallel_for(entries.size(), [&](std::size_t idx) {
    const Entry& entry = entries[idx];
    if (!entry.key) {
      problems[idx] = entry.problem;
      return;
    }
    auto stored = read_parquet_file(entry.path);
    if (stored.ok()) {
      tables[idx] = StackTable{*entry.key, entry.path, std::move(stored->rows), stored->schema};
    } else {
      problems[idx] = stored.error().message();
    }
  });
  DatasetSnapshot snapshot;
  for (std::size_t idx = 0; idx < entries.size(); ++idx) {
    if (tables[idx]) {
      snapshot.stacks.push_back(std::move(*tables[idx]));
    } else {
      snapshot.problems.push_back({entries[idx].path, std::move(problems[idx])});
    }
  }
  std::sort(snapshot.stacks.begin(), snapshot.stacks.end(),
            [](const StackTable& a, const StackTable& b) { return a.key < b.key; });
  return snapshot;
}

std::vector<StackKey> DatasetDir::stacks() const {
  std::vector<StackKey> keys;
  for (Entry& entry : list_entries(data_dir())) {
    if (entry.key) keys.push_back(std::move(*entry.key));
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

std::vector<FileProblem> DatasetDir::validate() const {
  std::vector<FileProblem> problems;
  if (!fs::is_directory(data_dir())) {
    problems.push_back({data_dir(), "no data/ folder: not a canrun dataset"});
    return problems;
  }
  DatasetSnapshot snapshot = load_all();
  problems = std::move(snapshot.problems);
  for (const StackTable& table : snapshot.stacks) {
    std::vector<std::string> row_problems;
    std::set<RowKey> seen;
    for (const VerdictRow& row : table.rows) {
      if (auto status = check_row(row); !status.ok()) {
        row_problems.push_back(status.error().message());
      } else if (auto key = stack_key_of(row); !key.ok() || *key != table.key) {
        row_problems.push_back(fmt::format(
            "row {} ({}) belongs to stack {}, not to this file's {}", row.model_id, row.task,
            key.ok() ? key->display() : key.error().message(), table.key.display()));
      }
      if (!seen.insert({row.model_id, row.task}).second) {
        row_problems.push_back(
            fmt::format("row {} ({}) appears more than once", row.model_id, row.task));
      }
    }
    if (row_problems.empty()) continue;
    const std::size_t shown = std::min(row_problems.size(), kMaxRowProblemsPerFile);
    std::string text =
        fmt::format("{}", fmt::join(row_problems.begin(), row_problems.begin() + shown, "; "));
    if (row_problems.size() > shown) {
      text += fmt::format("; and {} more", row_problems.size() - shown);
    }
    problems.push_back({table.path, std::move(text)});
  }
  std::sort(problems.begin(), problems.end(),
            [](const FileProblem& a, const FileProblem& b) { return a.path < b.path; });
  return problems;
}

Status DatasetDir::write_card() const {
  CANRUN_ASSIGN_OR_RETURN(FileLock lock, FileLock::acquire(root_ / ".locks" / "README.lock"));
  std::vector<StackSummary> summaries;
  for (const Entry& entry : list_entries(data_dir())) {
    if (!entry.key) continue;
    auto counts = count_results(entry.path);
    if (!counts.ok()) {
      log::warning("{}: {}; left out of the dataset card", entry.path.string(),
                   counts.error().message());
      continue;
    }
    StackSummary summary{*entry.key, 0, std::move(*counts)};
    for (const auto& [result, rows] : summary.results) summary.rows += rows;
    summaries.push_back(std::move(summary));
  }
  std::sort(summaries.begin(), summaries.end(),
            [](const StackSummary& a, const StackSummary& b) { return a.key < b.key; });
  std::error_code error;
  const bool census = std::filesystem::is_regular_file(root_ / kCensusMarker, error);
  return write_file_atomically(root_ / "README.md", render_card(summaries, census));
}

}  // namespace canrun::dataset
