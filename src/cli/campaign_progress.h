// How a campaign or a fleet worker shows its progress on stderr: one status line redrawn on a
// terminal, plain log lines otherwise, and with --json only the warnings. What it prints is
// built by the pure functions and ProgressStatus below, which take the time as an argument, so
// that a test reads the lines without a terminal or a clock.
//
// Thread safety: none; run_campaign and run_worker call their observer from one thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "campaign/local_campaign.h"
#include "core/result.h"
#include "dataset/verdict_row.h"

namespace canrun::cli {

//! The log line of each event where stderr is no terminal.
std::string planned_message(std::size_t items, std::size_t to_run);
std::string started_message(const campaign::WorkItem& item, const std::string& cores);
std::string verifying_message(const campaign::WorkItem& item, std::string_view evidence);
std::string finished_message(const campaign::WorkItem& item, const dataset::VerdictRow& row);
//! A warning, shown with --json too.
std::string failed_message(const campaign::WorkItem& item, const Error& error);

//! What the status line counts: the items ended per result, those running with where and
//! since when, and from these the expected time left.
class ProgressStatus {
 public:
  using Clock = std::chrono::steady_clock;

  explicit ProgressStatus(Clock::time_point now) : started_at_(now) {}

  //! `to_run` items are to run, from `now` on.
  void planned(std::size_t to_run, Clock::time_point now);
  //! The item `key` runs on `where` (its cores, or "host" while it is verified) since `now`.
  void running(const std::string& key, const std::string& where, Clock::time_point now);
  //! The item `key` ended with `result`: a verdict, or "error" when it could not run.
  void ended(const std::string& key, const std::string& result);

  //! "[done/total] RESULT count... | KEY @WHERE 12s... | ETA 30s", at most 200 bytes; the ETA
  //! once something ended and while something is left.
  std::string line(Clock::time_point now) const;

 private:
  struct Running {
    std::string where;
    Clock::time_point since;
  };

  std::size_t total_ = 0;
  std::size_t done_ = 0;
  Clock::time_point started_at_;
  std::map<std::string, std::size_t> counts_;
  std::map<std::string, Running> running_;
};

//! The observer `canrun campaign` and `canrun worker` run with.
class ProgressDisplay final : public campaign::CampaignObserver {
 public:
  //! `quiet` (--json): no status line and no log lines, only the warnings.
  explicit ProgressDisplay(bool quiet);

  void planned(const std::vector<campaign::WorkItem>& items, std::size_t to_run) override;
  void started(const campaign::WorkItem& item, const std::string& cores) override;
  void verifying(const campaign::WorkItem& item, std::string_view evidence) override;
  void finished(const campaign::WorkItem& item, const dataset::VerdictRow& row) override;
  void failed(const campaign::WorkItem& item, const Error& error) override;
  void tick() override;
  //! Erases the status line, so that what is printed next starts on a clean line.
  void clear();

 private:
  void redraw();

  bool terminal_;
  bool quiet_;
  bool drawn_ = false;
  ProgressStatus status_{ProgressStatus::Clock::now()};
};

}  // namespace canrun::cli
