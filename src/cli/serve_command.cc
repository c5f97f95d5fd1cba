// canrun serve: the Space — the JSON API and the page, from one process (SPEC.md §9).
#include <fmt/format.h>
#include <signal.h>
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <optional>

#include "cli/commands.h"
#include "cli/exit_code.h"
#include "core/cache_dir.h"
#include "core/log.h"
#include "hub/hub_client.h"
#include "serve/embedded_assets.h"
#include "serve/http_server.h"
#include "serve/rankings_refresher.h"
#include "serve/space_reloader.h"
#include "serve/space_service.h"
#include "serve/space_sources.h"

namespace canrun::cli {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kRankingsRefreshLimit = 100;  //!< models per task and sort

struct ServeOptions {
  std::string data;
  std::string census;
  std::string rankings;
  std::string catalog;
  std::string backends;
  std::string cache;
  std::string web;
  std::string host = "127.0.0.1";
  int port = 7860;
  double reload_seconds = 2.0;
  double exit_after_seconds = 0;
  std::size_t max_connections = 4096;
  unsigned threads = 0;
  double request_deadline_seconds = 10;
  double refresh_rankings_seconds = 6 * 3600;
};

//! Lets this process hold as many sockets as its hard limit allows (the connection cap needs
//! more than the usual soft limit of 1024).
void raise_open_file_limit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    (void)setrlimit(RLIMIT_NOFILE, &limit);
  }
}

//! What the Space reads besides the dataset: the folders given, else the shipped catalog and
//! backend profiles and the rankings snapshots `canrun hub` keeps, each said in the log.
serve::SourcePaths source_paths(const ServeOptions& options) {
  serve::SourcePaths paths;
  paths.dataset = options.data;
  if (!options.census.empty()) {
    paths.census = options.census;
    log::info("census: {} (the Architectures view; the census line of untested models)",
              options.census);
  }
  if (!options.catalog.empty()) {
    paths.catalog = options.catalog;
  } else if (auto shipped = shipped_dir("catalog")) {
    paths.catalog = *shipped;
  }
  log::info("catalog: {}",
            paths.catalog ? paths.catalog->string() : "none (no --catalog, none shipped)");
  if (!options.rankings.empty()) {
    paths.rankings = options.rankings;
    log::info("rankings: {}", options.rankings);
  } else if (const fs::path snapshots = default_rankings_dir();
             fs::is_directory(snapshots) || options.refresh_rankings_seconds > 0) {
    paths.rankings = snapshots;
    log::info("rankings: {} (the last snapshots of canrun hub rankings)", snapshots.string());
  } else {
    log::info(
        "rankings: none at {}: Trending and Downloads list nothing until `canrun hub "
        "rankings` saves a snapshot there (or give --rankings)",
        snapshots.string());
  }
  if (!options.backends.empty()) {
    paths.backends = options.backends;
  } else {
    paths.backends = shipped_dir("backends").value_or("backends");
  }
  paths.stack_cache =
      (options.cache.empty() ? default_cache_dir() : fs::path(options.cache)) / "stack";
  log::info("stack answers for predicted plans: {}", paths.stack_cache->string());
  return paths;
}

int run_serve(const ServeOptions& options) {
  const serve::SourcePaths paths = source_paths(options);
  std::optional<hub::HubConfig> hub_config;
  if (options.refresh_rankings_seconds > 0) {
    auto config = hub::HubConfig::from_environment();
    if (!config.ok()) return report(config.error());
    hub_config = *config;
    std::error_code error;
    fs::create_directories(*paths.rankings, error);  // where the refresh writes the snapshots
  }
  serve::SpaceSources sources(paths);
  auto index = sources.load();
  if (!index.ok()) return report(index.error());
  log::info("index: {} stacks, {} census stacks, {} rows, {} ranked models, loaded in {:.3f} s",
            (*index)->stack_count(), (*index)->census_stack_count(), (*index)->row_count(),
            (*index)->ranked_model_count(), sources.last_load_seconds());

  serve::StaticAssets assets;
  if (options.web.empty()) {
    assets = serve::StaticAssets::from_contents(serve::embedded_page_files());
  } else {
    auto loaded = serve::StaticAssets::load(options.web);
    if (!loaded.ok()) return report(loaded.error());
    assets = std::move(*loaded);
  }

  // The gauges are read on the server's threads; the reloader and the server are made after
  // the service that reads them, so they are found through these once they exist.
  std::atomic<const serve::SpaceReloader*> reloader_for_gauges{nullptr};
  std::atomic<serve::HttpServer*> server_for_gauges{nullptr};
  serve::SpaceService service(std::move(assets), std::move(*index),
                              [&](serve::IndexGauges& gauges) {
                                if (const serve::SpaceReloader* reloader = reloader_for_gauges) {
                                  reloader->read_gauges(gauges);
                                }
                                if (serve::HttpServer* server = server_for_gauges.load()) {
                                  gauges.open_connections = server->open_connections();
                                  gauges.rejected_requests = server->rejected_requests();
                                }
                              });

  // Signals are taken by sigtimedwait on this thread; every other thread inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  raise_open_file_limit();

  // After the mask: the reloader's thread leaves SIGINT and SIGTERM to this one.
  serve::SpaceReloader reloader(std::move(sources), service,
                                std::chrono::milliseconds(static_cast<std::int64_t>(
                                    std::max(0.05, options.reload_seconds) * 1000)));
  reloader_for_gauges = &reloader;
  serve::ServerLimits limits;
  limits.max_connections = options.max_connections;
  limits.threads = options.threads;
  limits.request_deadline =
      std::chrono::milliseconds(static_cast<std::int64_t>(options.request_deadline_seconds * 1000));
  auto server = serve::HttpServer::start(
      options.host, static_cast<std::uint16_t>(options.port), limits,
      [&service](const serve::HttpRequest& request) { return service.handle(request); });
  if (!server.ok()) return report(server.error());
  server_for_gauges = server->get();
  std::optional<serve::RankingsRefresher> refresher;
  if (hub_config) {
    log::info("rankings: refreshed from {} now and every {:g} s", hub_config->endpoint,
              options.refresh_rankings_seconds);
    refresher.emplace(
        *hub_config, *paths.rankings,
        std::chrono::seconds(static_cast<std::int64_t>(options.refresh_rankings_seconds)),
        kRankingsRefreshLimit);
  }

  // The one line on stdout: scripts and tests read the port from it.
  std::cout << fmt::format("serving on http://{}:{}/", options.host, (*server)->port())
            << std::endl;

  const auto deadline = options.exit_after_seconds > 0
                            ? std::chrono::steady_clock::now() +
                                  std::chrono::milliseconds(
                                      static_cast<std::int64_t>(options.exit_after_seconds * 1000))
                            : std::chrono::steady_clock::time_point::max();
  for (;;) {
    timespec wait{1, 0};
    const int signal = sigtimedwait(&signals, nullptr, &wait);
    if (signal == SIGINT || signal == SIGTERM) {
      log::info("stopping on signal {}", signal);
      break;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      log::info("stopping: --exit-after reached");
      break;
    }
  }
  if (refresher) refresher->stop();
  reloader.stop();
  server_for_gauges = nullptr;
  (*server)->stop();
  return kExitOk;
}

}  // namespace

void register_serve_command(const CommandRegistry& registry) {
  auto options = std::make_shared<ServeOptions>();
  CLI::App* serve =
      registry.root->add_subcommand("serve", "Serve the Space: the JSON API and the page");
  serve->add_option("--data", options->data, "The dataset folder (holds data/*.parquet)")
      ->required();
  serve->add_option("--census", options->census,
                    "A census dataset (canrun census --out) served beside the dataset: the "
                    "Architectures view, and on untested models the census verdict of their "
                    "model type on the same stack");
  serve->add_option("--rankings", options->rankings,
                    "Folder of rankings snapshots <task>__<sort>.json (default: where canrun "
                    "hub rankings keeps them, $CANRUN_RANKINGS_DIR or the cache's rankings/)");
  serve->add_option("--catalog", options->catalog,
                    "Folder of the catalog: selected.toml, exclusions.toml (default: the "
                    "shipped catalog/)");
  serve->add_option("--backends", options->backends,
                    "Folder of backend profiles, for the cache prefetch commands (default: the "
                    "shipped backends/)");
  serve
      ->add_option("--refresh-rankings", options->refresh_rankings_seconds,
                   "Seconds between refreshes of the rankings snapshots from the Hub while "
                   "serving (0: never); an unreachable Hub keeps the snapshots")
      ->check(CLI::Range(0.0, 1e9))
      ->capture_default_str();
  serve->add_option("--cache", options->cache,
                    "canrun's cache folder, whose stack answers (which model types each "
                    "transformers version can shard) make the predicted plans (default: "
                    "$CANRUN_CACHE)");
  serve->add_option("--host", options->host, "Address to listen on")->capture_default_str();
  serve->add_option("--port", options->port, "Port to listen on (0 picks a free one)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  serve
      ->add_option("--reload-interval", options->reload_seconds,
                   "Seconds between looks for new or replaced files")
      ->check(CLI::Range(0.05, 3600.0))
      ->capture_default_str();
  serve
      ->add_option("--max-connections", options->max_connections,
                   "Connections served at once; more are answered 503")
      ->check(CLI::Range(1, 1'000'000))
      ->capture_default_str();
  serve->add_option("--threads", options->threads, "Worker threads (0: one per core)")
      ->capture_default_str();
  serve
      ->add_option("--request-deadline", options->request_deadline_seconds,
                   "Seconds a client has to send each request whole")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  serve->add_option("--web", options->web,
                    "Serve the page from this folder instead of the copy built in");
  serve->add_option("--exit-after", options->exit_after_seconds,
                    "Stop by itself after this many seconds (for tests)");
  serve->callback(
      [options, action = registry.action] { *action = [options] { return run_serve(*options); }; });
}

}  // namespace canrun::cli
