// The Hub's rankings of one task (GET /api/models?pipeline_tag=T&sort=...), paged through the
// Link header's rel="next", and their snapshot on disk, DIR/<task>__<sort>.json, that the
// campaign and the Space read. Snapshot form (shared with them):
//   {"task", "sort": "downloads"|"trending", "fetched_at": "YYYY-MM-DDTHH:MM:SSZ",
//    "endpoint", "models": [{"id", "downloads", "likes", "trendingScore", "pipeline_tag",
//    "library_name", "tags", "gated", "createdAt", "lastModified", "safetensors", "config"},
//    ...]}   in rank order. "safetensors" ({"parameters": {DTYPE: n}, "total"}) and "config"
//    (the few fields the Hub lists: "architectures", "model_type", "quantization_config") are
//    kept in the Hub's shape; snapshots written before they were fetched lack them, and read.
//
// Thread safety: free functions; fetch_rankings uses the client from one thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "core/utc_time.h"
#include "hub/hub_client.h"

namespace canrun::hub {

enum class RankingSort { kDownloads, kTrending };

//! "downloads" or "trending" (also the API's "trendingScore").
Result<RankingSort> parse_ranking_sort(std::string_view text);
//! The name in snapshot files and on the command line: "downloads", "trending".
std::string_view ranking_sort_name(RankingSort sort);
//! The Hub API's sort key: "downloads", "trendingScore".
std::string_view ranking_sort_key(RankingSort sort);

//! A task name as the Hub spells pipeline tags: 1..64 of [a-z0-9-].
Status check_task_name(std::string_view task);

struct RankedModel {
  std::string id;                           //!< "owner/name", validated
  std::int64_t downloads = 0;               //!< last 30 days
  std::int64_t likes = 0;                   //!< likes
  double trending_score = 0;                //!< the Hub's trendingScore
  std::optional<std::string> pipeline_tag;  //!< task
  std::optional<std::string> library_name;  //!< e.g. "transformers"
  std::vector<std::string> tags;            //!< tags
  std::string gated;                        //!< "" (false), "auto" or "manual"
  std::string created_at;                   //!< createdAt, as the Hub wrote it
  std::string last_modified;                //!< lastModified, as the Hub wrote it
  //! safetensors.parameters: parameter count per safetensors dtype ("BF16" → n); empty when
  //! the Hub listed none (no safetensors weights, or a snapshot older than the field).
  std::map<std::string, std::int64_t> parameters_by_dtype;
  std::vector<std::string> architectures;   //!< config.architectures
  std::optional<std::string> model_type;    //!< config.model_type
  std::optional<std::string> quant_method;  //!< config.quantization_config.quant_method

  //! Bytes of the safetensors weights, from the parameter counts and their dtypes' sizes;
  //! nullopt when there are no counts or a dtype is unknown.
  std::optional<std::uint64_t> weights_bytes() const;
};

struct RankingsSnapshot {
  std::string task;  //!< pipeline tag
  RankingSort sort = RankingSort::kDownloads;
  std::string fetched_at;           //!< UTC, "YYYY-MM-DDTHH:MM:SSZ" (core/utc_time.h)
  std::string endpoint;             //!< the Hub it came from
  std::vector<RankedModel> models;  //!< rank order (rank = index + 1)
};

//! One model object of an /api/models page or a snapshot; `where` prefixes errors, which name
//! the field: a missing or invalid "id", a field of the wrong type.
Result<RankedModel> ranked_model_from_json(const nlohmann::json& value, std::string_view where);
nlohmann::json ranked_model_to_json(const RankedModel& model);

//! Fetches up to `limit` models in the Hub's order, following Link pages (walk_pages, in
//! paged_listing.h). Errors: a page
//! that is not a JSON list, a bad model entry (naming page and index), a next link to another
//! host or back to a page already read (a loop), and the client's errors.
Result<RankingsSnapshot> fetch_rankings(HubClient& client, std::string_view task, RankingSort sort,
                                        std::size_t limit,
                                        std::chrono::system_clock::time_point now);

//! Rankings as the campaign, the Space and `canrun hub` use them: fresh from the Hub (and
//! then written to DIR as the new snapshot), or, when the Hub cannot be reached (kUnavailable,
//! kTimeout: offline, down, rate limited), the last snapshot in DIR with its age. Other
//! errors (a malformed answer) are returned and leave the snapshot as it was.
struct CurrentRankings {
  RankingsSnapshot snapshot;    //!< at most `limit` models
  bool from_hub = false;        //!< false: read from the snapshot file
  std::chrono::seconds age{0};  //!< now − fetched_at
  std::string hub_error;        //!< why the Hub was not used (when !from_hub)
};
Result<CurrentRankings> current_rankings(HubClient& client, const std::filesystem::path& dir,
                                         std::string_view task, RankingSort sort, std::size_t limit,
                                         std::chrono::system_clock::time_point now);

std::filesystem::path snapshot_path(const std::filesystem::path& dir, std::string_view task,
                                    RankingSort sort);
nlohmann::json snapshot_to_json(const RankingsSnapshot& snapshot);
Result<RankingsSnapshot> snapshot_from_json_text(std::string_view text, std::string_view where);
//! Writes DIR/<task>__<sort>.json atomically (creating DIR).
Status write_snapshot(const std::filesystem::path& dir, const RankingsSnapshot& snapshot);
//! Reads DIR/<task>__<sort>.json; kNotFound when there is none.
Result<RankingsSnapshot> read_snapshot(const std::filesystem::path& dir, std::string_view task,
                                       RankingSort sort);

//! "3 d 4 h", "2 h 5 min", "40 s": an age for people.
std::string describe_age(std::chrono::seconds age);

}  // namespace canrun::hub
