// Request counters and latency histograms of the Space, printed as Prometheus text.
//
// Thread safety: record() may be called from many threads at once (relaxed atomics);
// prometheus_text() reads a consistent-enough view while they run.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace canrun::serve {

//! What a request asked for, one label value per route.
enum class Route {
  kPage,
  kVersions,
  kModels,
  kModel,
  kCauses,
  kCompare,
  kArchitectures,
  kHealth,
  kMetrics,
  kOther,
  kCount
};
std::string_view route_name(Route route);

//! Gauges the service fills in when printing.
struct IndexGauges {
  std::size_t stacks = 0;
  std::size_t rows = 0;
  std::size_t ranked_models = 0;
  std::uint64_t generation = 0;
  std::uint64_t reloads = 0;
  std::uint64_t reload_failures = 0;
  std::size_t open_connections = 0;
  std::uint64_t rejected_requests = 0;
  double last_load_seconds = 0;
};

class ServeMetrics {
 public:
  static constexpr std::array<double, 12> kBucketsSeconds = {
      0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 0.5, 2.5};

  void record(Route route, int status, std::chrono::nanoseconds took);
  std::string prometheus_text(const IndexGauges& gauges) const;

 private:
  static constexpr std::size_t kRoutes = static_cast<std::size_t>(Route::kCount);
  static constexpr std::size_t kStatusClasses = 6;  // 1xx..5xx by first digit; [0] unused
  struct RouteStats {
    std::array<std::atomic<std::uint64_t>, kStatusClasses> by_status_class{};
    std::array<std::atomic<std::uint64_t>, kBucketsSeconds.size()> buckets{};
    std::atomic<std::uint64_t> count{0};
    std::atomic<std::uint64_t> nanoseconds{0};
  };
  std::array<RouteStats, kRoutes> routes_{};
};

}  // namespace canrun::serve
