// fetch_rankings: the only part of rankings that talks to the Hub (the rest parses and stores,
// and is fuzzed without a client).
#include <fmt/format.h>

#include <set>

#include "core/text.h"
#include "hub/paged_listing.h"
#include "hub/rankings.h"

namespace canrun::hub {
namespace {

using nlohmann::json;

// The Hub caps a page at 1000 models; ask for no more than that per page.
constexpr std::size_t kMaxPageSize = 1000;
constexpr std::size_t kMaxPages = 10'000;

}  // namespace

Result<RankingsSnapshot> fetch_rankings(HubClient& client, std::string_view task, RankingSort sort,
                                        std::size_t limit,
                                        std::chrono::system_clock::time_point now) {
  CANRUN_RETURN_IF_ERROR(check_task_name(task));
  if (limit == 0) return invalid_argument("--limit must be at least 1");
  RankingsSnapshot snapshot{std::string(task), sort, format_utc(now), client.config().endpoint, {}};
  std::string url =
      fmt::format("{}/api/models?pipeline_tag={}&sort={}&limit={}", client.config().endpoint, task,
                  ranking_sort_key(sort), std::min(limit, kMaxPageSize));
  for (const char* field :
       {"downloads", "likes", "trendingScore", "pipeline_tag", "library_name", "tags", "gated",
        "createdAt", "lastModified", "safetensors", "config"}) {
    url += fmt::format("&expand={}", field);
  }
  std::set<std::string> seen_ids;
  const std::string same_hub = client.config().endpoint + "/api/models";
  const PagedListing listing{url,
                             {same_hub + "?", same_hub + "/"},
                             kMaxPages,
                             "rankings",
                             "models",
                             [](std::size_t page, const std::string& page_url) {
                               return fmt::format("rankings page {} ({})", page,
                                                  quote_for_message(page_url, 120));
                             }};
  CANRUN_RETURN_IF_ERROR(
      walk_pages(client, listing, [&](const json& body, const std::string& where) -> Result<bool> {
        for (std::size_t idx = 0; idx < body.size() && snapshot.models.size() < limit; ++idx) {
          CANRUN_ASSIGN_OR_RETURN(
              RankedModel model,
              ranked_model_from_json(body[idx], fmt::format("{}, model {}", where, idx + 1)));
          if (!seen_ids.insert(model.id).second) continue;  // a page boundary moved under us
          snapshot.models.push_back(std::move(model));
        }
        return snapshot.models.size() < limit;
      }));
  return snapshot;
}

Result<CurrentRankings> current_rankings(HubClient& client, const std::filesystem::path& dir,
                                         std::string_view task, RankingSort sort, std::size_t limit,
                                         std::chrono::system_clock::time_point now) {
  auto fetched = fetch_rankings(client, task, sort, limit, now);
  if (fetched.ok()) {
    CANRUN_RETURN_IF_ERROR(write_snapshot(dir, *fetched));
    return CurrentRankings{std::move(fetched).value(), true, std::chrono::seconds(0), ""};
  }
  const ErrorCode code = fetched.error().code();
  if (code != ErrorCode::kUnavailable && code != ErrorCode::kTimeout) return fetched.error();
  auto snapshot = read_snapshot(dir, task, sort);
  if (!snapshot.ok()) {
    return Error(code, fmt::format("{}; and no snapshot to fall back on: {}",
                                   fetched.error().message(), snapshot.error().message()));
  }
  CANRUN_ASSIGN_OR_RETURN(const auto fetched_at, parse_utc(snapshot->fetched_at));
  const auto age = std::chrono::duration_cast<std::chrono::seconds>(now - fetched_at);
  if (snapshot->models.size() > limit) snapshot->models.resize(limit);
  return CurrentRankings{std::move(snapshot).value(), false, age, fetched.error().message()};
}

}  // namespace canrun::hub
