// fetch_rankings: the only part of rankings that talks to the Hub (the rest parses and stores,
// and is fuzzed without a client).
#include <fmt/format.h>

#include <set>

#include "core/text.h"
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
  std::set<std::string> seen_urls;
  std::set<std::string> seen_ids;
  const std::string same_hub = client.config().endpoint + "/api/models";
  for (std::size_t page = 1; snapshot.models.size() < limit; ++page) {
    if (!seen_urls.insert(url).second || page > kMaxPages) {
      return corrupt(fmt::format("rankings: the Link header leads back to {} (a pagination loop)",
                                 quote_for_message(url, 200)));
    }
    CANRUN_ASSIGN_OR_RETURN(HttpResponse response, client.get(url));
    const auto body = json::parse(response.body, nullptr, false);
    const std::string where =
        fmt::format("rankings page {} ({})", page, quote_for_message(url, 120));
    if (body.is_discarded()) {
      return corrupt(
          fmt::format("{}: not valid JSON ({} bytes; truncated?)", where, response.body.size()));
    }
    if (!body.is_array()) {
      return corrupt(
          fmt::format("{}: a JSON {} where a list of models belongs", where, body.type_name()));
    }
    for (std::size_t idx = 0; idx < body.size() && snapshot.models.size() < limit; ++idx) {
      CANRUN_ASSIGN_OR_RETURN(
          RankedModel model,
          ranked_model_from_json(body[idx], fmt::format("{}, model {}", where, idx + 1)));
      if (!seen_ids.insert(model.id).second) continue;  // a page boundary moved under us
      snapshot.models.push_back(std::move(model));
    }
    const auto link = response.header("link");
    const auto next = link ? next_link(*link) : std::nullopt;
    if (!next || body.empty()) break;
    if (!next->starts_with(same_hub + "?") && !next->starts_with(same_hub + "/")) {
      return corrupt(fmt::format("{}: the next page {} is not on {}", where,
                                 quote_for_message(*next, 200), client.config().endpoint));
    }
    url = *next;
  }
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
  const auto age =
      std::chrono::duration_cast<std::chrono::seconds>(now - *parse_utc(snapshot->fetched_at));
  if (snapshot->models.size() > limit) snapshot->models.resize(limit);
  return CurrentRankings{std::move(snapshot).value(), false, age, fetched.error().message()};
}

}  // namespace canrun::hub
