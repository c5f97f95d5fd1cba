// A campaign across a fleet, from the command line (campaign/fleet.h, campaign/executors.h):
// `canrun campaign --executor slurm|k8s` plans it and writes (and on Slurm submits) the jobs,
// `--collect` merges the done slices into the dataset, and `canrun campaign status` reads
// each slice's state from the campaign folder.
#pragma once

#include <string>

#include "campaign/executors.h"
#include "campaign/local_campaign.h"
#include "cli/campaign_options.h"

namespace canrun::cli {

//! Plans `campaign` into --campaign-dir and writes `executor`'s files to --emit or the
//! folder; without --emit, submits them when the executor has a submit command (Slurm).
//! With --dry-run, prints the plan, its slices and what a run would write and submit, and
//! writes, submits and runs nothing. Returns the exit code.
int run_fleet(const CampaignCommandOptions& options, const campaign::Executor& executor,
              const campaign::CampaignOptions& campaign);

//! Merges the done slices of --collect into --out; exit 1 while some slice is not done.
int run_collect(const CampaignCommandOptions& options);

//! Each slice's state, the counts per result and the expected time left; exit 0.
int run_status(const std::string& dir, bool json);

}  // namespace canrun::cli
