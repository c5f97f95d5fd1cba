// The processes of a campaign's runs, so that none outlives the canrun that started it (SPEC.md
// §10, durability): each process group a run starts is written to the slice's journal
// (campaign_dir.h) as it starts, and every process carries CANRUN_CAMPAIGN=<campaign folder> in
// its environment. A canrun killed with kill -9 cannot end its runs; the next canrun of the same
// campaign and slice does (end_leftover_processes), telling them by that variable from processes
// that reuse a number since.
//
// Thread safety: TrackingLauncher runs processes from several threads at once, and kill_all may
// be called from any thread. mark_campaign_processes changes the environment: call it before
// any thread that starts processes.
#pragma once

#include <filesystem>
#include <mutex>
#include <set>

#include "campaign/campaign_dir.h"
#include "process/process.h"

namespace canrun::campaign {

//! The variable every process of a campaign's runs carries: the campaign folder.
inline constexpr const char* kCampaignVariable = "CANRUN_CAMPAIGN";

//! Every process started from now on (its environment from process::current_environment)
//! carries CANRUN_CAMPAIGN=`dir`, so that a later canrun can tell it.
void mark_campaign_processes(const std::filesystem::path& dir);

//! Ends every process of a run that a killed canrun of campaign `dir` (slice `slice`) left
//! behind: the process groups its journal names whose members still carry
//! CANRUN_CAMPAIGN=<dir>. Returns how many processes it killed.
int end_leftover_processes(const std::filesystem::path& dir, int slice = 0);

//! A launcher that journals every process group it starts and can kill those still running.
class TrackingLauncher final : public process::ProcessLauncher {
 public:
  //! Journals to `dir`'s slice `slice`; both must outlive the launcher.
  TrackingLauncher(process::ProcessLauncher& inner, const CampaignDir& dir, int slice)
      : inner_(inner), dir_(dir), slice_(slice) {}

  Result<process::ProcessOutcome> run(const process::ProcessSpec& spec) override;

  //! Kills every running group, and every one started from now on.
  void kill_all();

 private:
  process::ProcessLauncher& inner_;
  const CampaignDir& dir_;
  const int slice_;
  std::mutex mutex_;
  std::set<int> live_;
  bool killing_ = false;
};

}  // namespace canrun::campaign
