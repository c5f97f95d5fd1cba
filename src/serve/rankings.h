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

namespace canrun::serve {

struct RankedModel {
  std::string id;
  std::int64_t downloads = 0;
  std::int64_t likes = 0;
  double trending_score = 0;
};

struct RankingSnapshot {
  std::string task;
  std::string sort;  //!< "downloads" or "trending"
  std::string fetched_at;
  std::vector<RankedModel> models;  //!< in ranking order
};

//! Parses one snapshot; `source` names it in errors. Models whose id does not validate are
//! dropped (a Hub answer is not trusted), the others keep their order.
Result<RankingSnapshot> parse_ranking_snapshot(std::string_view json_text, std::string_view source);

struct RankingsLoad {
  std::vector<RankingSnapshot> snapshots;  //!< sorted by (task, sort)
  std::vector<std::string> problems;       //!< one line per file that could not be used
};

//! Reads every <task>__<sort>.json in `dir`; the name must agree with the contents.
RankingsLoad load_rankings_dir(const std::filesystem::path& dir);

}  // namespace canrun::serve
