#include "serve/metrics.h"

#include <fmt/format.h>

namespace canrun::serve {

std::string_view route_name(Route route) {
  switch (route) {
    case Route::kPage:
      return "page";
    case Route::kVersions:
      return "api_versions";
    case Route::kModels:
      return "api_models";
    case Route::kModel:
      return "api_model";
    case Route::kCauses:
      return "api_causes";
    case Route::kCompare:
      return "api_compare";
    case Route::kArchitectures:
      return "api_architectures";
    case Route::kHealth:
      return "healthz";
    case Route::kMetrics:
      return "metrics";
    case Route::kOther:
    case Route::kCount:
      break;
  }
  return "other";
}

void ServeMetrics::record(Route route, int status, std::chrono::nanoseconds took) {
  RouteStats& stats = routes_[static_cast<std::size_t>(route)];
  const std::size_t status_class = status >= 100 && status < 600 ? status / 100 : 5;
  stats.by_status_class[status_class].fetch_add(1, std::memory_order_relaxed);
  stats.count.fetch_add(1, std::memory_order_relaxed);
  stats.nanoseconds.fetch_add(static_cast<std::uint64_t>(took.count()), std::memory_order_relaxed);
  const double seconds = std::chrono::duration<double>(took).count();
  for (std::size_t idx = 0; idx < kBucketsSeconds.size(); ++idx) {
    if (seconds <= kBucketsSeconds[idx]) {
      stats.buckets[idx].fetch_add(1, std::memory_order_relaxed);
      break;
    }
  }
}

std::string ServeMetrics::prometheus_text(const IndexGauges& gauges) const {
  std::string out;
  out +=
      "# HELP canrun_http_requests_total Requests answered by the handler, by route and status "
      "class.\n# TYPE canrun_http_requests_total counter\n";
  for (std::size_t route = 0; route < kRoutes; ++route) {
    for (std::size_t status_class = 1; status_class < kStatusClasses; ++status_class) {
      const auto value = routes_[route].by_status_class[status_class].load();
      if (value == 0) continue;
      out += fmt::format("canrun_http_requests_total{{route=\"{}\",code=\"{}xx\"}} {}\n",
                         route_name(static_cast<Route>(route)), status_class, value);
    }
  }
  out +=
      "# HELP canrun_http_request_duration_seconds Time in the handler, by route.\n"
      "# TYPE canrun_http_request_duration_seconds histogram\n";
  for (std::size_t route = 0; route < kRoutes; ++route) {
    const RouteStats& stats = routes_[route];
    const auto count = stats.count.load();
    if (count == 0) continue;
    const auto name = route_name(static_cast<Route>(route));
    std::uint64_t cumulative = 0;
    for (std::size_t idx = 0; idx < kBucketsSeconds.size(); ++idx) {
      cumulative += stats.buckets[idx].load();
      out +=
          fmt::format("canrun_http_request_duration_seconds_bucket{{route=\"{}\",le=\"{}\"}} {}\n",
                      name, kBucketsSeconds[idx], cumulative);
    }
    out +=
        fmt::format("canrun_http_request_duration_seconds_bucket{{route=\"{}\",le=\"+Inf\"}} {}\n",
                    name, count);
    out += fmt::format("canrun_http_request_duration_seconds_sum{{route=\"{}\"}} {:.9f}\n", name,
                       static_cast<double>(stats.nanoseconds.load()) / 1e9);
    out +=
        fmt::format("canrun_http_request_duration_seconds_count{{route=\"{}\"}} {}\n", name, count);
  }
  auto gauge = [&](std::string_view name, std::string_view type, std::string_view help,
                   auto value) {
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n{} {}\n", name, help, name, type, name, value);
  };
  gauge("canrun_index_stacks", "gauge", "Stack files in the index.", gauges.stacks);
  gauge("canrun_index_rows", "gauge", "Verdict rows in the index.", gauges.rows);
  gauge("canrun_index_ranked_models", "gauge", "Entries of all rankings snapshots.",
        gauges.ranked_models);
  gauge("canrun_index_generation", "gauge", "Index builds since start (1 = the first).",
        gauges.generation);
  gauge("canrun_index_reloads_total", "counter", "Reloads that swapped in a new index.",
        gauges.reloads);
  gauge("canrun_index_reload_failures_total", "counter",
        "Files that could not be read on a reload (the old version was kept).",
        gauges.reload_failures);
  gauge("canrun_index_last_load_seconds", "gauge", "Time the last index build took.",
        gauges.last_load_seconds);
  gauge("canrun_http_open_connections", "gauge", "Connections open now.", gauges.open_connections);
  gauge("canrun_http_rejected_requests_total", "counter",
        "Requests refused before the handler: malformed, too large, over the connection cap.",
        gauges.rejected_requests);
  return out;
}

}  // namespace canrun::serve
