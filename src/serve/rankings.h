// Rankings snapshots written by `canrun hub rankings`: DIR/<task>__<sort>.json with the Hub's
// models for one task in ranking order (rank = position + 1), <sort> downloads or trending.
//
// Thread safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "hub/rankings.h"

namespace canrun::serve {

// The snapshot types and their JSON reader are the hub stage's (src/hub/rankings.h), which
// writes these files; the Space only loads a folder of them.
using RankedModel = hub::RankedModel;
using RankingSnapshot = hub::RankingsSnapshot;

struct RankingsLoad {
  std::vector<RankingSnapshot> snapshots;  //!< sorted by (task, sort)
  std::vector<std::string> problems;       //!< one line per file that could not be used
};

//! Reads every <task>__<sort>.json in `dir`; the name must agree with the contents.
RankingsLoad load_rankings_dir(const std::filesystem::path& dir);

}  // namespace canrun::serve
