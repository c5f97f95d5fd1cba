// A campaign folder: the durable state of one campaign, local or spread over a fleet (a local
// campaign is a fleet campaign of one slice).
//
//   DIR/campaign.json               what the campaign is: backend, tasks, dataset, options
//   DIR/work.json                   the planned work list, {"items": [...]} (work.h)
//   DIR/.lock                       held by the canrun running it (one at a time)
//   DIR/slices/<n>/results/<i>.json the verdict row of item i (row_json.h), written atomically
//                                   once the item is done: the results are the progress
//   DIR/slices/<n>/results/<i>.log  the run's log (stdout, stderr) beside a failure's verdict
//   DIR/slices/<n>/journal.jsonl    append-only events: an item started, a process group began
//                                   (so a later canrun can end what a killed one left), done
//   DIR/slices.json                 a fleet campaign's slices: {"slices": [[item, ...], ...]}
//                                   (absent: one slice, 0, of every item)
//   DIR/slices/<n>/.lock            held by the worker running slice n
//
// Thread safety: write_result and journal may be called from several threads at once (each
// writes its own file, or appends one whole line); the rest from one thread.
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "campaign/work.h"
#include "core/atomic_file.h"
#include "core/result.h"
#include "dataset/verdict_row.h"

namespace canrun::campaign {

class CampaignDir {
 public:
  explicit CampaignDir(std::filesystem::path root) : root_(std::move(root)) {}
  const std::filesystem::path& root() const { return root_; }

  //! Whether a campaign was planned here (work.json exists).
  bool planned() const;
  //! Holds DIR/.lock; kFailedCheck naming the folder when another canrun holds it.
  Result<FileLock> lock() const;

  //! Holds slices/<slice>/.lock; kFailedCheck when another worker runs that slice.
  Result<FileLock> lock_slice(int slice) const;
  //! Whether a process holds the slice's lock now (a worker is running it).
  bool slice_running(int slice) const;

  //! Writes slices.json: the item indices of each slice.
  Status write_slices(const std::vector<std::vector<std::size_t>>& slices) const;
  //! The slices; one slice of every item when the campaign has no slices.json. kCorrupt for an
  //! index outside the work list or an item in two slices.
  Result<std::vector<std::vector<std::size_t>>> read_slices(std::size_t item_count) const;

  //! Writes campaign.json and work.json (atomically each).
  Status write_plan(const nlohmann::json& settings, const std::vector<WorkItem>& items) const;
  Result<nlohmann::json> read_settings() const;
  Result<std::vector<WorkItem>> read_work() const;

  //! The verdict of item `index` of slice `slice`, written atomically; with the run's log
  //! (run::run_log) beside it when given, or without one (a stale log is removed).
  //! The run's output images (role → PNG) are copied beside it too, as <index>.<role>.png.
  Status write_result(int slice, std::size_t index, const dataset::VerdictRow& row,
                      std::string_view log = {},
                      const std::map<std::string, std::filesystem::path>& images = {}) const;
  //! The log kept with item `index`'s result; empty when none was.
  std::string read_log(int slice, std::size_t index) const;
  //! The images kept with item `index`'s result: role → file.
  std::map<std::string, std::filesystem::path> read_images(int slice, std::size_t index) const;
  //! Every finished item of the slice: index → row. A result file that does not parse is
  //! reported in `problems` and counts as not done.
  Result<std::map<std::size_t, dataset::VerdictRow>> read_results(
      int slice, std::vector<std::string>* problems = nullptr) const;

  //! Appends one event (a JSON object; "at" is added) to the slice's journal.
  Status journal(int slice, nlohmann::json event) const;
  //! The slice's events in order; a line cut short by a crash is skipped.
  std::vector<nlohmann::json> read_journal(int slice) const;

  std::filesystem::path slice_dir(int slice) const;

 private:
  std::filesystem::path root_;
};

}  // namespace canrun::campaign
