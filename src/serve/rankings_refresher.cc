#include "serve/rankings_refresher.h"

#include <fmt/format.h>

#include "core/log.h"
#include "hub/candidates.h"
#include "hub/rankings.h"

namespace canrun::serve {

namespace {

hub::HubConfig quick(hub::HubConfig config) {
  config.max_attempts = 2;
  return config;
}

std::unique_ptr<hub::HttpTransport> quick_transport() {
  hub::TransportOptions options = hub::default_transport_options();
  options.connect_timeout = std::chrono::seconds(5);
  options.total_timeout = std::chrono::seconds(20);
  return hub::make_curl_transport(options);
}

}  // namespace

RankingsRefresher::RankingsRefresher(hub::HubConfig config, std::filesystem::path dir,
                                     std::chrono::seconds period, std::size_t limit)
    : client_(std::make_unique<hub::HubClient>(
          quick(std::move(config)), quick_transport(),
          [this](std::chrono::milliseconds wait) { loop_.wait_or_stop(wait); })),
      dir_(std::move(dir)),
      limit_(limit),
      loop_(period, BackgroundLoop::FirstRun::kAtOnce, [this] { refresh_once(); }) {}

RankingsRefresher::~RankingsRefresher() { stop(); }

void RankingsRefresher::stop() { loop_.stop(); }

void RankingsRefresher::refresh_once() {
  std::error_code error;
  std::filesystem::create_directories(dir_, error);
  for (const std::string& task : hub::supported_tasks()) {
    for (hub::RankingSort sort : {hub::RankingSort::kDownloads, hub::RankingSort::kTrending}) {
      if (loop_.stopping()) return;
      auto rankings = hub::current_rankings(*client_, dir_, task, sort, limit_,
                                            std::chrono::system_clock::now());
      const std::string what = fmt::format("{} by {}", task, hub::ranking_sort_name(sort));
      if (!rankings.ok()) {
        log::warning("rankings refresh, {}: {}", what, rankings.error().message());
      } else if (rankings->from_hub) {
        log::info("rankings refresh, {}: {} models from the Hub", what,
                  rankings->snapshot.models.size());
      } else {
        log::warning("rankings refresh, {}: {}; keeping the snapshot fetched at {}", what,
                     rankings->hub_error, rankings->snapshot.fetched_at);
      }
    }
  }
}

}  // namespace canrun::serve
