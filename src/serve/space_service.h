// SpaceService: the Space's routes on top of the current SpaceIndex.
//
//   GET /                       the page (also /model/<org>/<name>: the page routes itself)
//   GET /app.js /style.css ...  the page's files (static_assets.h)
//   GET /api/versions           stacks per backend, newest first; tasks; defaults
//   GET /api/models?...         one view of one task on one stack
//   GET /api/causes?...         one stack's failures grouped by cause
//   GET /api/compare?a=&b=      two stacks compared by the regression rule
//   GET /api/architectures?...  the census served beside the dataset: a verdict per model type
//   GET /api/model/<org>/<name> one model: verdict, stack, run.py, prefetch command, history
//   GET /api/log/<org>/<name>   the kept log of its failure; /api/image/...: its output images
//   GET /healthz                {"status":"ok",...}
//   GET /metrics                Prometheus text
//
// API answers are cached per (index generation, path, parameters): a repeated query costs a
// hash lookup. A new index (set_index) starts a new generation. Every API request is checked
// the same way before its answer is computed: a parameter its route does not take, or a bad
// model id in a model route's path, is a 400 that names it.
//
// Thread safety: handle() may be called from many threads at once, concurrently with
// set_index() from the reload thread.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>

#include "serve/http_server.h"
#include "serve/metrics.h"
#include "serve/space_index.h"
#include "serve/static_assets.h"

namespace canrun::serve {

class SpaceService {
 public:
  //! `gauges` adds the loader's and the server's figures to /metrics.
  SpaceService(StaticAssets assets, std::shared_ptr<const SpaceIndex> index,
               std::function<void(IndexGauges&)> gauges);

  HttpResponse handle(const HttpRequest& request);

  //! Swaps in a new index atomically; requests already running finish on the old one.
  void set_index(std::shared_ptr<const SpaceIndex> index);
  std::shared_ptr<const SpaceIndex> index() const { return index_.load(); }
  std::uint64_t generation() const { return generation_.load(); }

 private:
  struct CacheShard {
    std::shared_mutex mutex;  //!< shared for lookups, exclusive for inserts
    std::uint64_t generation = 0;
    std::unordered_map<std::string, HttpResponse> responses;
  };
  static constexpr std::size_t kCacheShards = 16;
  static constexpr std::size_t kMaxCachedPerShard = 4096;

  HttpResponse route(const HttpRequest& request, Route& route_out);
  HttpResponse cached(const HttpRequest& request,
                      const std::function<HttpResponse(const SpaceIndex&)>& compute);

  StaticAssets assets_;
  std::atomic<std::shared_ptr<const SpaceIndex>> index_;
  std::atomic<std::uint64_t> generation_{1};
  std::function<void(IndexGauges&)> gauges_;
  ServeMetrics metrics_;
  std::array<CacheShard, kCacheShards> cache_;
};

}  // namespace canrun::serve
