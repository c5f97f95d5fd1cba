#include "campaign/disk_budget.h"

#include <fmt/format.h>

#include <algorithm>
#include <system_error>

#include "core/atomic_file.h"
#include "core/log.h"
#include "core/text.h"

namespace canrun::campaign {
namespace {

namespace fs = std::filesystem;

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) {
    text.pop_back();
  }
  return text;
}

bool is_regular(const fs::path& path) {
  std::error_code error;
  return fs::is_regular_file(fs::symlink_status(path, error));
}

//! Removes `path` when it exists; an error only when it exists and cannot be removed.
Status remove_if_there(const fs::path& path) {
  std::error_code error;
  fs::remove(path, error);
  if (error && error != std::errc::no_such_file_or_directory) {
    return io_error(fmt::format("cannot delete {} from the HF cache: {}",
                                quote_for_message(path.string()), error.message()));
  }
  return ok_status();
}

//! Removes the empty folders below `top` (deepest first); `top` itself too when `with_top`.
void remove_empty_folders(const fs::path& top, bool with_top) {
  std::error_code error;
  std::vector<fs::path> folders;
  for (auto it = fs::recursive_directory_iterator(top, error);
       !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
    if (it->is_directory(error) && !it->is_symlink(error)) folders.push_back(it->path());
  }
  std::sort(folders.begin(), folders.end(), [](const fs::path& a, const fs::path& b) {
    return std::distance(a.begin(), a.end()) > std::distance(b.begin(), b.end());
  });
  for (const fs::path& folder : folders) {
    if (fs::is_empty(folder, error)) fs::remove(folder, error);
  }
  if (with_top && fs::is_empty(top, error)) fs::remove(top, error);
}

}  // namespace

CheckpointNeed CheckpointNeed::from_manifest(const hub::CheckpointManifest& manifest) {
  CheckpointNeed need{manifest.model, manifest.commit, {}};
  std::set<std::string> seen;
  for (const hub::RepoFile& file : manifest.files) {
    if (seen.insert(file.blob_name()).second) need.blobs.push_back({file.blob_name(), file.size});
  }
  return need;
}

Result<std::unique_ptr<DiskBudget>> DiskBudget::open(hub::HfCache cache, Options options) {
  if (options.budget_bytes == 0) {
    return invalid_argument("the disk budget is 0 bytes: no checkpoint could ever be fetched")
        .with_reason(reason::kBadParameter, {"--disk-budget"});
  }
  std::unique_ptr<DiskBudget> budget(new DiskBudget(std::move(cache), std::move(options)));
  CANRUN_RETURN_IF_ERROR(budget->scan_start());
  CANRUN_RETURN_IF_ERROR(budget->read_ledger());
  return budget;
}

Status DiskBudget::scan_start() {
  const fs::path& root = cache_.root();
  std::error_code error;
  if (!fs::is_directory(root, error)) return ok_status();
  for (const auto& repo : fs::directory_iterator(root, error)) {
    const std::string folder = repo.path().filename().string();
    if (folder.starts_with(".") || folder.find("--") == std::string::npos ||
        !repo.is_directory(error)) {
      continue;
    }
    start_repos_.insert(folder);
    for (const auto& blob : fs::directory_iterator(repo.path() / "blobs", error)) {
      const std::string name = blob.path().filename().string();
      if (!name.ends_with(".incomplete")) user_blobs_.insert(folder + "/" + name);
    }
    error.clear();
    const fs::path snapshots = repo.path() / "snapshots";
    for (auto it = fs::recursive_directory_iterator(snapshots, error);
         !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
      const std::string relative = fs::relative(it->path(), snapshots, error).string();
      if (it.depth() == 0) start_snapshots_.insert(folder + "/" + relative);
      if (it->is_symlink(error) || !it->is_directory(error)) {
        start_links_.insert(folder + "/" + relative);
      }
    }
    error.clear();
    const fs::path refs = repo.path() / "refs";
    for (auto it = fs::recursive_directory_iterator(refs, error);
         !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
      if (!it->is_regular_file(error)) continue;
      auto text = read_file(it->path());
      if (!text.ok()) continue;
      start_refs_[folder + "/" + fs::relative(it->path(), refs, error).string()] = trimmed(*text);
    }
    error.clear();
  }
  return ok_status();
}

Status DiskBudget::read_ledger() {
  if (!options_.ledger) return ok_status();
  std::error_code error;
  if (!fs::exists(*options_.ledger, error)) return ok_status();
  CANRUN_ASSIGN_OR_RETURN(const std::string text, read_file(*options_.ledger));
  std::size_t line_number = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string key = trimmed(text.substr(start, end - start));
    start = end + 1;
    ++line_number;
    if (key.empty()) continue;
    const auto slash = key.find('/');
    if (slash == std::string::npos || key.find("--") > slash ||
        !hub::is_blob_name(key.substr(slash + 1)) || key.starts_with(".")) {
      return corrupt(fmt::format(
          "the disk budget's ledger {}, line {}: {} is not "
          "\"models--<owner>--<name>/<blob>\"",
          quote_for_message(options_.ledger->string()), line_number, quote_for_message(key)));
    }
    const fs::path blob = cache_.root() / key.substr(0, slash) / "blobs" / key.substr(slash + 1);
    std::uint64_t bytes = 0;
    if (is_regular(blob)) {
      bytes = fs::file_size(blob, error);
    } else if (is_regular(blob.string() + ".incomplete")) {
      bytes = fs::file_size(blob.string() + ".incomplete", error);
    } else {
      continue;  // evicted, or never fetched, before the campaign stopped
    }
    user_blobs_.erase(key);
    campaign_blobs_[key] = BlobState{error ? 0 : bytes, 0, ++release_seq_};
    add_held_locked(error ? 0 : bytes);
  }
  return write_ledger({});
}

Status DiskBudget::write_ledger(const std::vector<std::string>& extra) {
  if (!options_.ledger) return ok_status();
  std::set<std::string> keys(extra.begin(), extra.end());
  for (const auto& [key, state] : campaign_blobs_) keys.insert(key);
  std::string text;
  for (const std::string& key : keys) text += key + "\n";
  std::error_code error;
  fs::create_directories(options_.ledger->parent_path(), error);
  return write_file_atomically(*options_.ledger, text);
}

std::string DiskBudget::key_of(const ModelId& model, std::string_view blob) const {
  return model.cache_folder_name() + "/" + std::string(blob);
}

fs::path DiskBudget::blob_path(const std::string& key) const {
  const auto slash = key.find('/');
  return cache_.root() / key.substr(0, slash) / "blobs" / key.substr(slash + 1);
}

void DiskBudget::add_held_locked(std::uint64_t bytes) {
  held_ += bytes;
  peak_ = std::max(peak_, held_);
}

Result<std::optional<FetchTicket>> DiskBudget::try_acquire_locked(const CheckpointNeed& need) {
  if (cancelled_) {
    return Error(ErrorCode::kUnavailable, "the campaign is stopping: no more checkpoints fetched");
  }
  auto commit = Revision::parse(need.commit);
  if (!commit.ok() || !commit->is_commit()) {
    return invalid_argument(fmt::format("the commit {} of {} is not 40 hex digits",
                                        quote_for_message(need.commit), need.model.str()));
  }
  std::map<std::string, std::uint64_t> needed;  // the campaign's part of the need
  std::uint64_t total = 0;
  std::uint64_t missing = 0;
  for (const BlobNeed& blob : need.blobs) {
    if (!hub::is_blob_name(blob.name)) {
      return invalid_argument(fmt::format("{} of {}: {} is not a blob name", need.model.str(),
                                          need.commit, quote_for_message(blob.name)));
    }
    const std::string key = key_of(need.model, blob.name);
    if (user_blobs_.contains(key) || needed.contains(key)) continue;
    const auto state = campaign_blobs_.find(key);
    if (state == campaign_blobs_.end() && is_regular(blob_path(key))) {
      // Another process fetched it since the budget opened: not the campaign's to delete.
      log::debug("{} appeared in the HF cache without the campaign; it is kept", key);
      user_blobs_.insert(key);
      continue;
    }
    needed[key] = blob.bytes;
    total += blob.bytes;
    const std::uint64_t counted = state == campaign_blobs_.end() ? 0 : state->second.counted;
    missing += blob.bytes > counted ? blob.bytes - counted : 0;
  }
  if (total > options_.budget_bytes) {
    return Error(ErrorCode::kFailedCheck,
                 fmt::format("{} at {} needs {} bytes in the HF cache, more than the whole disk "
                             "budget of {} bytes",
                             need.model.str(), need.commit, total, options_.budget_bytes))
        .with_reason(kOverDiskBudget);
  }
  bool evicted = false;
  while (held_ + missing > options_.budget_bytes) {
    // The least recently released blob that no ticket (and not this need) holds.
    const std::string* victim = nullptr;
    std::uint64_t victim_seq = 0;
    for (const auto& [key, state] : campaign_blobs_) {
      if (state.tickets > 0 || needed.contains(key)) continue;
      if (victim == nullptr || state.released_seq < victim_seq) {
        victim = &key;
        victim_seq = state.released_seq;
      }
    }
    if (victim == nullptr) break;
    CANRUN_RETURN_IF_ERROR(evict_locked(std::string(*victim)));
    evicted = true;
  }
  if (held_ + missing > options_.budget_bytes) {
    if (evicted) CANRUN_RETURN_IF_ERROR(write_ledger({}));
    return std::optional<FetchTicket>();
  }
  std::vector<std::string> new_keys;
  for (const auto& [key, bytes] : needed) {
    if (!campaign_blobs_.contains(key)) new_keys.push_back(key);
  }
  // Listed before the download starts, so that a campaign killed mid-download still knows
  // the partial file is its own.
  if (evicted || !new_keys.empty()) CANRUN_RETURN_IF_ERROR(write_ledger(new_keys));
  FetchTicket ticket{next_ticket_++, need.model, need.commit, missing};
  TicketState& held =
      tickets_.emplace(ticket.id, TicketState{need.model, need.commit, {}}).first->second;
  for (const auto& [key, bytes] : needed) {
    BlobState& state = campaign_blobs_[key];
    state.counted = std::max(state.counted, bytes);
    ++state.tickets;
    held.keys.push_back(key);
  }
  add_held_locked(missing);
  return std::optional<FetchTicket>(std::move(ticket));
}

Result<FetchTicket> DiskBudget::acquire(const CheckpointNeed& need, std::stop_token stop) {
  std::unique_lock lock(mutex_);
  while (true) {
    CANRUN_ASSIGN_OR_RETURN(std::optional<FetchTicket> ticket, try_acquire_locked(need));
    if (ticket) return std::move(*ticket);
    log::debug("{} at {}: waiting for room in the disk budget ({} of {} bytes held)",
               need.model.str(), need.commit, held_, options_.budget_bytes);
    const std::uint64_t seen = generation_;
    room_.wait(lock, stop, [&] { return cancelled_ || generation_ != seen; });
    if (stop.stop_requested()) {
      return Error(
          ErrorCode::kUnavailable,
          fmt::format("stopped while {} waited for room in the disk budget", need.model.str()));
    }
  }
}

Result<std::optional<FetchTicket>> DiskBudget::try_acquire(const CheckpointNeed& need) {
  std::lock_guard lock(mutex_);
  return try_acquire_locked(need);
}

void DiskBudget::release(const FetchTicket& ticket) {
  std::lock_guard lock(mutex_);
  const auto found = tickets_.find(ticket.id);
  if (found == tickets_.end()) return;
  bool unreserved = false;
  for (const std::string& key : found->second.keys) {
    const auto state = campaign_blobs_.find(key);
    if (state == campaign_blobs_.end() || --state->second.tickets > 0) continue;
    state->second.released_seq = ++release_seq_;
    const fs::path blob = blob_path(key);
    if (!is_regular(blob) && !is_regular(blob.string() + ".incomplete")) {
      held_ -= state->second.counted;  // reserved, never written
      campaign_blobs_.erase(state);
      unreserved = true;
    }
  }
  tickets_.erase(found);
  if (unreserved) {
    auto written = write_ledger({});
    if (!written.ok()) log::warning("{}", written.error().message());
  }
  ++generation_;
  room_.notify_all();
}

void DiskBudget::cancel() {
  std::lock_guard lock(mutex_);
  cancelled_ = true;
  ++generation_;
  room_.notify_all();
}

Status DiskBudget::evict_released() {
  std::lock_guard lock(mutex_);
  std::vector<std::string> victims;
  for (const auto& [key, state] : campaign_blobs_) {
    if (state.tickets == 0) victims.push_back(key);
  }
  for (const std::string& key : victims) CANRUN_RETURN_IF_ERROR(evict_locked(key));
  return write_ledger({});
}

Status DiskBudget::evict_locked(const std::string& key) {
  const auto slash = key.find('/');
  const std::string folder = key.substr(0, slash);
  const std::string blob_name = key.substr(slash + 1);
  const fs::path repo = cache_.root() / folder;
  const fs::path blob = blob_path(key);
  log::debug("disk budget: evicting {}", key);
  CANRUN_RETURN_IF_ERROR(remove_if_there(blob));
  CANRUN_RETURN_IF_ERROR(remove_if_there(blob.string() + ".incomplete"));

  // Commits of this repo that an unreleased ticket is filling: their folders stay.
  std::set<std::string> held_commits;
  for (const auto& [id, ticket] : tickets_) {
    if (ticket.model.cache_folder_name() == folder) held_commits.insert(ticket.commit);
  }
  std::error_code error;
  const fs::path snapshots = repo / "snapshots";
  std::vector<fs::path> snapshot_dirs;
  for (const auto& entry : fs::directory_iterator(snapshots, error)) {
    if (entry.is_directory(error)) snapshot_dirs.push_back(entry.path());
  }
  error.clear();
  for (const fs::path& snapshot : snapshot_dirs) {
    std::vector<fs::path> links;
    for (auto it = fs::recursive_directory_iterator(snapshot, error);
         !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
      if (!it->is_symlink(error)) continue;
      const fs::path target = fs::read_symlink(it->path(), error);
      if (error || target.filename() != blob_name || target.parent_path().filename() != "blobs") {
        error.clear();
        continue;
      }
      if (start_links_.contains(folder + "/" + fs::relative(it->path(), snapshots).string())) {
        continue;  // the user's link (dangling since before the campaign)
      }
      links.push_back(it->path());
    }
    error.clear();
    for (const fs::path& link : links) CANRUN_RETURN_IF_ERROR(remove_if_there(link));
    const std::string commit = snapshot.filename().string();
    const bool keep_folder =
        start_snapshots_.contains(folder + "/" + commit) || held_commits.contains(commit);
    if (!links.empty()) remove_empty_folders(snapshot, !keep_folder);
  }

  // Refs that now name a missing snapshot: back to their value at opening, else gone.
  const fs::path refs = repo / "refs";
  std::vector<fs::path> ref_files;
  for (auto it = fs::recursive_directory_iterator(refs, error);
       !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
    if (it->is_regular_file(error)) ref_files.push_back(it->path());
  }
  error.clear();
  for (const fs::path& ref : ref_files) {
    auto text = read_file(ref);
    if (!text.ok()) continue;
    const std::string commit = trimmed(*text);
    if (fs::is_directory(snapshots / commit, error)) continue;
    const auto start = start_refs_.find(folder + "/" + fs::relative(ref, refs, error).string());
    if (start != start_refs_.end() && start->second != commit &&
        fs::is_directory(snapshots / start->second, error)) {
      CANRUN_RETURN_IF_ERROR(write_file_atomically(ref, start->second));
    } else {
      CANRUN_RETURN_IF_ERROR(remove_if_there(ref));
    }
  }
  if (fs::is_directory(refs, error)) remove_empty_folders(refs, false);

  // A repo the campaign brought, left with nothing: gone whole.
  const bool repo_held = !held_commits.empty();
  if (!start_repos_.contains(folder) && !repo_held &&
      (!fs::exists(snapshots, error) || fs::is_empty(snapshots, error)) &&
      (!fs::exists(repo / "blobs", error) || fs::is_empty(repo / "blobs", error))) {
    fs::remove_all(repo, error);
  }

  const auto state = campaign_blobs_.find(key);
  if (state != campaign_blobs_.end()) {
    held_ -= state->second.counted;
    campaign_blobs_.erase(state);
  }
  return ok_status();
}

std::uint64_t DiskBudget::bytes_held() const {
  std::lock_guard lock(mutex_);
  return held_;
}

std::uint64_t DiskBudget::peak_bytes_held() const {
  std::lock_guard lock(mutex_);
  return peak_;
}

std::vector<std::string> DiskBudget::campaign_blobs() const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> keys;
  for (const auto& [key, state] : campaign_blobs_) keys.push_back(key);
  return keys;
}

}  // namespace canrun::campaign
