#include "campaign/campaign_dir.h"

#include <fmt/format.h>

#include <chrono>
#include <sstream>

#include "core/utc_time.h"
#include "dataset/dataset.h"
#include "dataset/row_json.h"

namespace canrun::campaign {

namespace fs = std::filesystem;

namespace {

Result<nlohmann::json> read_json_file(const fs::path& path) {
  CANRUN_ASSIGN_OR_RETURN(std::string text, read_file(path));
  auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return corrupt(fmt::format("{}: not valid JSON", path.string()));
  return json;
}

}  // namespace

bool CampaignDir::planned() const { return fs::exists(root_ / "work.json"); }

fs::path CampaignDir::slice_dir(int slice) const {
  return root_ / "slices" / std::to_string(slice);
}

Result<FileLock> CampaignDir::lock() const {
  auto lock = FileLock::try_acquire(root_ / ".lock");
  if (!lock.ok() && lock.error().has_reason(reason::kBusy)) {
    return Error(ErrorCode::kFailedCheck,
                 fmt::format("campaign folder {} is in use by another canrun", root_.string()));
  }
  return lock;
}

Result<FileLock> CampaignDir::lock_slice(int slice) const {
  std::error_code error;
  fs::create_directories(slice_dir(slice), error);
  auto lock = FileLock::try_acquire(slice_dir(slice) / ".lock");
  if (!lock.ok() && lock.error().has_reason(reason::kBusy)) {
    return Error(ErrorCode::kFailedCheck,
                 fmt::format("slice {} of campaign {} is being run by another worker", slice,
                             root_.string()));
  }
  return lock;
}

bool CampaignDir::slice_running(int slice) const {
  if (!fs::exists(slice_dir(slice) / ".lock")) return false;
  auto lock = FileLock::try_acquire(slice_dir(slice) / ".lock");
  return !lock.ok() && lock.error().has_reason(reason::kBusy);
}

Status CampaignDir::write_slices(const std::vector<std::vector<std::size_t>>& slices) const {
  return write_file_atomically(root_ / "slices.json",
                               nlohmann::json{{"slices", slices}}.dump() + "\n");
}

Result<std::vector<std::vector<std::size_t>>> CampaignDir::read_slices(
    std::size_t item_count) const {
  const fs::path path = root_ / "slices.json";
  std::vector<std::vector<std::size_t>> slices;
  if (!fs::exists(path)) {
    slices.emplace_back(item_count);
    for (std::size_t index = 0; index < item_count; ++index) slices[0][index] = index;
    return slices;
  }
  CANRUN_ASSIGN_OR_RETURN(nlohmann::json json, read_json_file(path));
  if (!json.is_object() || !json.contains("slices") || !json["slices"].is_array()) {
    return corrupt(fmt::format("{}: no \"slices\" list", path.string()));
  }
  std::vector<bool> seen(item_count, false);
  for (const auto& slice : json["slices"]) {
    if (!slice.is_array()) return corrupt(fmt::format("{}: a slice is not a list", path.string()));
    auto& indices = slices.emplace_back();
    for (const auto& index : slice) {
      if (!index.is_number_unsigned() || index.get<std::size_t>() >= item_count ||
          seen[index.get<std::size_t>()]) {
        return corrupt(fmt::format("{}: item {} is not an item of work.json, or is in two slices",
                                   path.string(), index.dump()));
      }
      seen[index.get<std::size_t>()] = true;
      indices.push_back(index.get<std::size_t>());
    }
  }
  return slices;
}

Status CampaignDir::write_plan(const nlohmann::json& settings,
                               const std::vector<WorkItem>& items) const {
  std::error_code error;
  fs::create_directories(root_, error);
  if (error) return io_error(fmt::format("cannot create {}: {}", root_.string(), error.message()));
  nlohmann::json work = {{"items", nlohmann::json::array()}};
  for (const WorkItem& item : items) work["items"].push_back(work_item_to_json(item));
  CANRUN_RETURN_IF_ERROR(write_file_atomically(root_ / "campaign.json", settings.dump(1) + "\n"));
  return write_file_atomically(root_ / "work.json", work.dump(1) + "\n");
}

Result<nlohmann::json> CampaignDir::read_settings() const {
  return read_json_file(root_ / "campaign.json");
}

Result<std::vector<WorkItem>> CampaignDir::read_work() const {
  const fs::path path = root_ / "work.json";
  CANRUN_ASSIGN_OR_RETURN(nlohmann::json work, read_json_file(path));
  if (!work.is_object() || !work.contains("items") || !work["items"].is_array()) {
    return corrupt(fmt::format("{}: no \"items\" list", path.string()));
  }
  std::vector<WorkItem> items;
  for (const auto& entry : work["items"]) {
    auto item = work_item_from_json(entry);
    if (!item.ok()) return item.error().with_context(path.string());
    items.push_back(std::move(*item));
  }
  return items;
}

Status CampaignDir::write_result(int slice, std::size_t index, const dataset::VerdictRow& row,
                                 std::string_view log,
                                 const std::map<std::string, fs::path>& images) const {
  const fs::path dir = slice_dir(slice) / "results";
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) return io_error(fmt::format("cannot create {}: {}", dir.string(), error.message()));
  // The log first: a result file always finds its own run's log (or none) beside it.
  const fs::path log_path = dir / fmt::format("{}.log", index);
  if (log.empty()) {
    fs::remove(log_path, error);
  } else {
    CANRUN_RETURN_IF_ERROR(write_file_atomically(log_path, log));
  }
  for (const std::string_view role : dataset::kImageRoles) {
    const fs::path path = dir / fmt::format("{}.{}.png", index, role);
    const auto source = images.find(std::string(role));
    if (source == images.end()) {
      fs::remove(path, error);
      continue;
    }
    CANRUN_ASSIGN_OR_RETURN(const std::string bytes, read_file(source->second));
    CANRUN_RETURN_IF_ERROR(write_file_atomically(path, bytes));
  }
  return write_file_atomically(dir / fmt::format("{}.json", index),
                               dataset::row_to_json(row).dump() + "\n");
}

std::string CampaignDir::read_log(int slice, std::size_t index) const {
  auto text = read_file(slice_dir(slice) / "results" / fmt::format("{}.log", index));
  return text.ok() ? std::move(*text) : std::string();
}

std::map<std::string, fs::path> CampaignDir::read_images(int slice, std::size_t index) const {
  std::map<std::string, fs::path> images;
  for (const std::string_view role : dataset::kImageRoles) {
    const fs::path path = slice_dir(slice) / "results" / fmt::format("{}.{}.png", index, role);
    if (fs::is_regular_file(path)) images.emplace(role, path);
  }
  return images;
}

Result<std::map<std::size_t, dataset::VerdictRow>> CampaignDir::read_results(
    int slice, std::vector<std::string>* problems) const {
  std::map<std::size_t, dataset::VerdictRow> results;
  const fs::path dir = slice_dir(slice) / "results";
  std::error_code error;
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (name.starts_with('.') || !name.ends_with(".json")) continue;  // a writer's temp file
    std::size_t index = 0;
    std::istringstream digits(name.substr(0, name.size() - 5));
    if (!(digits >> index) || !digits.eof()) continue;
    auto json = read_json_file(it->path());
    auto row =
        json.ok() ? dataset::row_from_json(*json) : Result<dataset::VerdictRow>(json.error());
    if (!row.ok()) {
      if (problems)
        problems->push_back(fmt::format("{}: {}", it->path().string(), row.error().message()));
      continue;
    }
    results.emplace(index, std::move(*row));
  }
  return results;
}

Status CampaignDir::journal(int slice, nlohmann::json event) const {
  const fs::path dir = slice_dir(slice);
  std::error_code error;
  fs::create_directories(dir, error);
  event["at"] = format_utc(std::chrono::system_clock::now(), UtcFraction::kMicroseconds);
  return append_line(dir / "journal.jsonl", event.dump());
}

std::vector<nlohmann::json> CampaignDir::read_journal(int slice) const {
  std::vector<nlohmann::json> events;
  auto text = read_file(slice_dir(slice) / "journal.jsonl");
  if (!text.ok()) return events;
  std::istringstream lines(*text);
  for (std::string line; std::getline(lines, line);) {
    auto event = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (event.is_object()) events.push_back(std::move(event));
  }
  return events;
}

}  // namespace canrun::campaign
