// What `canrun campaign` and `canrun worker` print on stdout: the planned work (--dry-run) and
// the outcome, each as a table or as JSON (--json).
#pragma once

#include <filesystem>

#include "campaign/local_campaign.h"

namespace canrun::cli {

//! Each item with its source, plan (or exclusion) and weights, then what could not be resolved.
//! Returns 0.
int print_plan(const campaign::PlannedWork& work, bool json);

//! What a campaign or a worker did: the items with their verdicts, then the counts and the
//! problems. Returns the exit code: 130 interrupted, 1 when some trial could not run, else 0.
int print_outcome(const campaign::CampaignOutcome& outcome,
                  const std::filesystem::path& campaign_dir, bool json);

}  // namespace canrun::cli
