#include "serve/space_service.h"

#include <fmt/format.h>

#include <charconv>
#include <chrono>
#include <set>

#include "core/json_output.h"
#include "core/model_id.h"
#include "core/text.h"

namespace canrun::serve {
namespace {

using nlohmann::json;

HttpResponse json_response(const json& value, int status = 200) {
  HttpResponse response;
  response.status = status;
  response.body = std::make_shared<const std::string>(to_json_text(value, -1));
  response.headers = {{"Cache-Control", "no-cache"}, {"X-Content-Type-Options", "nosniff"}};
  return response;
}

//! The HTTP status of an Error, from its code: the input is wrong (400), the thing asked for
//! does not exist (404), anything else is the server's fault (500).
int http_status_of(const Error& error) {
  switch (error.code()) {
    case ErrorCode::kInvalidArgument:
      return 400;
    case ErrorCode::kNotFound:
      return 404;
    case ErrorCode::kUnavailable:
      return 503;
    default:
      return 500;
  }
}

//! {"error": message, "parameters": the error's subjects} with the status of its code.
HttpResponse error_response(const Error& error) {
  return json_error(http_status_of(error), error.message(), error.subjects());
}

//! The request's parameters `names` are wrong: a 400 that names them.
Error bad_parameters(std::string message, std::vector<std::string> names) {
  return invalid_argument(std::move(message)).with_reason(reason::kBadParameter, std::move(names));
}

Error unknown_parameters_error(const std::vector<std::string>& unknown) {
  return bad_parameters(fmt::format("unknown parameter{} {}", unknown.size() == 1 ? "" : "s",
                                    fmt::join(unknown, ", ")),
                        unknown);
}

//! Names in `query` that `allowed` does not list, for a 400 that names them.
std::vector<std::string> unknown_parameters(const std::map<std::string, std::string>& query,
                                            std::initializer_list<std::string_view> allowed) {
  std::vector<std::string> unknown;
  for (const auto& [name, value] : query) {
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) unknown.push_back(name);
  }
  return unknown;
}

Result<std::size_t> parse_count(const std::string& name, const std::string& text, std::size_t max) {
  std::size_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value > max) {
    return bad_parameters(fmt::format("{} must be a whole number from 0 to {}, not {}", name, max,
                                      quote_for_message(text)),
                          {name});
  }
  return value;
}

}  // namespace

SpaceService::SpaceService(StaticAssets assets, std::shared_ptr<const SpaceIndex> index,
                           std::function<void(IndexGauges&)> gauges)
    : assets_(std::move(assets)), index_(std::move(index)), gauges_(std::move(gauges)) {}

void SpaceService::set_index(std::shared_ptr<const SpaceIndex> index) {
  index_.store(std::move(index));
  generation_.fetch_add(1);
}

HttpResponse SpaceService::handle(const HttpRequest& request) {
  const auto started = std::chrono::steady_clock::now();
  Route route_taken = Route::kOther;
  HttpResponse response = route(request, route_taken);
  metrics_.record(route_taken, response.status, std::chrono::steady_clock::now() - started);
  return response;
}

HttpResponse SpaceService::cached(const HttpRequest& request,
                                  const std::function<HttpResponse(const SpaceIndex&)>& compute) {
  // The key is the decoded path and parameters, so equivalent spellings share an entry.
  std::string key = request.path;
  for (const auto& [name, value] : request.query) {
    key.append(1, '\0').append(name).append(1, '=').append(value);
  }
  // Read the generation before the index: an entry is never filed under a newer generation
  // than the index it was computed from.
  const std::uint64_t generation = generation_.load();
  const auto index = index_.load();
  CacheShard& shard = cache_[std::hash<std::string>{}(key) % kCacheShards];
  {
    std::shared_lock lock(shard.mutex);
    if (shard.generation == generation) {
      if (auto found = shard.responses.find(key); found != shard.responses.end()) {
        return found->second;
      }
    }
  }
  HttpResponse response = compute(*index);
  if (response.status == 200 || response.status == 400 || response.status == 404) {
    std::unique_lock lock(shard.mutex);
    if (shard.generation != generation) {
      if (shard.generation > generation) return response;
      shard.responses.clear();
      shard.generation = generation;
    }
    if (shard.responses.size() >= kMaxCachedPerShard) shard.responses.clear();
    shard.responses.emplace(std::move(key), response);
  }
  return response;
}

HttpResponse SpaceService::route(const HttpRequest& request, Route& route_out) {
  const std::string& path = request.path;
  if (path == "/healthz") {
    route_out = Route::kHealth;
    const auto index = index_.load();
    return json_response({{"status", "ok"},
                          {"stacks", index->stack_count()},
                          {"rows", index->row_count()},
                          {"generation", generation_.load()}});
  }
  if (path == "/metrics") {
    route_out = Route::kMetrics;
    IndexGauges gauges;
    const auto index = index_.load();
    gauges.stacks = index->stack_count();
    gauges.rows = index->row_count();
    gauges.ranked_models = index->ranked_model_count();
    gauges.generation = generation_.load();
    if (gauges_) gauges_(gauges);
    HttpResponse response;
    response.content_type = "text/plain; version=0.0.4; charset=utf-8";
    response.body = std::make_shared<const std::string>(metrics_.prometheus_text(gauges));
    return response;
  }
  if (path == "/api/versions") {
    route_out = Route::kVersions;
    if (auto unknown = unknown_parameters(request.query, {}); !unknown.empty()) {
      return error_response(bad_parameters("/api/versions takes no parameters", unknown));
    }
    return cached(request,
                  [](const SpaceIndex& index) { return json_response(index.versions_json()); });
  }
  if (path == "/api/models") {
    route_out = Route::kModels;
    return cached(request, [&](const SpaceIndex& index) { return api_models(index, request); });
  }
  if (path == "/api/causes") {
    route_out = Route::kCauses;
    return cached(request, [&](const SpaceIndex& index) {
      if (auto unknown =
              unknown_parameters(request.query, {"backend", "compiler_version", "library_version"});
          !unknown.empty()) {
        return error_response(unknown_parameters_error(unknown));
      }
      auto result = index.causes_json(request.query);
      return result.ok() ? json_response(*result) : error_response(result.error());
    });
  }
  if (path == "/api/compare") {
    route_out = Route::kCompare;
    return cached(request, [&](const SpaceIndex& index) {
      if (auto unknown = unknown_parameters(request.query, {"a", "b", "task"}); !unknown.empty()) {
        return error_response(unknown_parameters_error(unknown));
      }
      auto result = index.compare_json(request.query);
      return result.ok() ? json_response(*result) : error_response(result.error());
    });
  }
  if (path.starts_with("/api/log/")) {
    route_out = Route::kModel;
    return cached(request, [&](const SpaceIndex& index) { return api_log(index, request); });
  }
  if (path.starts_with("/api/image/")) {
    route_out = Route::kModel;
    return cached(request, [&](const SpaceIndex& index) { return api_image(index, request); });
  }
  if (path.starts_with("/api/model/")) {
    route_out = Route::kModel;
    return cached(request, [&](const SpaceIndex& index) { return api_model(index, request); });
  }
  if (path.starts_with("/api/")) {
    return error_response(not_found(fmt::format("no API route {}", quote_for_message(path))));
  }
  route_out = Route::kPage;
  if (const StaticAsset* asset = assets_.find(path)) return assets_.respond(*asset, request);
  // The page's own routes (/model/<org>/<name>, /causes, /compare) are drawn by app.js from the
  // URL.
  if (path.starts_with("/model/") || path == "/causes" || path == "/compare") {
    if (const StaticAsset* page = assets_.find("/")) return assets_.respond(*page, request);
  }
  return error_response(not_found(fmt::format("nothing at {}", quote_for_message(path))));
}

HttpResponse SpaceService::api_models(const SpaceIndex& index, const HttpRequest& request) {
  const auto& params = request.query;
  if (auto unknown = unknown_parameters(params, {"view", "task", "q", "backend", "compiler_version",
                                                 "library_version", "offset", "limit", "sort"});
      !unknown.empty()) {
    return error_response(unknown_parameters_error(unknown));
  }
  auto param = [&](const char* name) {
    const auto found = params.find(name);
    return found == params.end() ? std::string() : found->second;
  };
  ModelsQuery query;
  if (const std::string view = param("view"); !view.empty()) {
    const auto parsed = parse_view(view);
    if (!parsed) {
      return error_response(
          bad_parameters(fmt::format("view {} is not one of selected, trending, downloads, tested",
                                     quote_for_message(view)),
                         {"view"}));
    }
    query.view = *parsed;
  }
  if (const std::string sort = param("sort"); !sort.empty()) {
    const auto parsed = parse_sort(sort);
    if (!parsed || query.view != View::kTested) {
      return error_response(bad_parameters(
          fmt::format("sort {} is not one of name, verdict, cores, runtime, memory, decode "
                      "(the tested view only)",
                      quote_for_message(sort)),
          {"sort"}));
    }
    query.sort = *parsed;
  }
  query.task = param("task");
  query.search = param("q");
  if (query.search.size() > 200) {
    return error_response(bad_parameters("q is longer than 200 characters", {"q"}));
  }
  query.backend = param("backend");
  query.compiler_version = param("compiler_version");
  query.library_version = param("library_version");
  if (params.contains("offset")) {
    auto offset = parse_count("offset", param("offset"), 10'000'000);
    if (!offset.ok()) return error_response(offset.error());
    query.offset = *offset;
  }
  if (params.contains("limit")) {
    auto limit = parse_count("limit", param("limit"), 500);
    if (!limit.ok()) return error_response(limit.error());
    query.limit = *limit;
  }
  auto result = index.models_json(query);
  if (!result.ok()) return error_response(result.error());
  return json_response(*result);
}

HttpResponse SpaceService::api_log(const SpaceIndex& index, const HttpRequest& request) {
  if (auto unknown = unknown_parameters(request.query,
                                        {"task", "backend", "compiler_version", "library_version"});
      !unknown.empty()) {
    return error_response(unknown_parameters_error(unknown));
  }
  const std::string_view text = std::string_view(request.path).substr(sizeof("/api/log/") - 1);
  auto id = ModelId::parse(text);
  if (!id.ok()) {
    return error_response(bad_parameters(
        fmt::format("model id {}: {}", quote_for_message(text), id.error().message()), {"model"}));
  }
  auto log = index.log_text(*id, request.query);
  if (!log.ok()) return error_response(log.error());
  HttpResponse response;
  response.content_type = "text/plain; charset=utf-8";
  response.body = std::make_shared<const std::string>(std::move(*log));
  return response;
}

HttpResponse SpaceService::api_image(const SpaceIndex& index, const HttpRequest& request) {
  if (auto unknown = unknown_parameters(
          request.query, {"task", "backend", "compiler_version", "library_version", "role"});
      !unknown.empty()) {
    return error_response(unknown_parameters_error(unknown));
  }
  const std::string_view text = std::string_view(request.path).substr(sizeof("/api/image/") - 1);
  auto id = ModelId::parse(text);
  if (!id.ok()) {
    return error_response(bad_parameters(
        fmt::format("model id {}: {}", quote_for_message(text), id.error().message()), {"model"}));
  }
  auto bytes = index.image_bytes(*id, request.query);
  if (!bytes.ok()) return error_response(bytes.error());
  HttpResponse response;
  response.content_type = "image/png";
  response.body = std::make_shared<const std::string>(std::move(*bytes));
  return response;
}

HttpResponse SpaceService::api_model(const SpaceIndex& index, const HttpRequest& request) {
  if (auto unknown = unknown_parameters(request.query,
                                        {"task", "backend", "compiler_version", "library_version"});
      !unknown.empty()) {
    return error_response(unknown_parameters_error(unknown));
  }
  const std::string_view text = std::string_view(request.path).substr(sizeof("/api/model/") - 1);
  auto id = ModelId::parse(text);
  if (!id.ok()) {
    return error_response(bad_parameters(
        fmt::format("model id {}: {}", quote_for_message(text), id.error().message()), {"model"}));
  }
  auto result = index.model_json(*id, request.query);
  if (!result.ok()) return error_response(result.error());
  return json_response(*result);
}

}  // namespace canrun::serve
