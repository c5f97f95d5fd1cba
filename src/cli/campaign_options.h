// The options of `canrun campaign`, shared by its local run (campaign_command.cc) and its fleet
// runs and their collection (fleet_commands.cc).
#pragma once

#include <cstddef>
#include <string>

#include "campaign/executors.h"
#include "cli/trial_options.h"

namespace canrun::cli {

struct CampaignCommandOptions {
  TrialOptions trial;
  std::string tasks = "text-generation";
  std::string selected;    //!< empty: the shipped catalog's (shipped_file)
  std::string exclusions;  //!< empty: the shipped catalog's (shipped_file)
  std::string rankings;
  std::size_t top = 0;
  std::string models;
  std::string out;
  std::string campaign_dir;
  int cores = 0;
  double disk_budget_gib = 0;
  bool resume = false;
  std::string retry;
  bool dry_run = false;
  bool json = false;
  // Fleet campaigns (campaign/fleet.h, campaign/executors.h).
  std::string executor = "local";
  std::size_t slices = 2;
  campaign::ExecutorOptions fleet;
  std::string emit;
  std::string collect;
  std::string compile_cache;
  bool canrun_given = false;  //!< --canrun was given
};

}  // namespace canrun::cli
