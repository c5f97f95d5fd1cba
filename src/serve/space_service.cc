#include "serve/space_service.h"

#include <fmt/format.h>

#include <chrono>
#include <optional>
#include <vector>

#include "core/json_output.h"
#include "core/model_id.h"
#include "core/text.h"
#include "dataset/dataset.h"
#include "serve/query_params.h"

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

//! `result`'s JSON as a 200, or its error.
Result<HttpResponse> json_answer(const Result<json>& result) {
  if (!result.ok()) return result.error();
  return json_response(*result);
}

//! `bytes` as a 200 of `content_type`, or the error.
Result<HttpResponse> bytes_answer(Result<std::string> bytes, std::string content_type) {
  if (!bytes.ok()) return bytes.error();
  HttpResponse response;
  response.content_type = std::move(content_type);
  response.body = std::make_shared<const std::string>(std::move(*bytes));
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

//! /api/models's parameters (already checked to be among those it takes) as a query.
Result<ModelsQuery> models_query(const QueryParams& params) {
  const auto param = [&](const char* name) { return param_of(params, name); };
  ModelsQuery query;
  if (const std::string view = param("view"); !view.empty()) {
    const auto parsed = parse_view(view);
    if (!parsed) {
      return bad_parameters(
          fmt::format("view {} is not one of selected, trending, downloads, tested",
                      quote_for_message(view)),
          {"view"});
    }
    query.view = *parsed;
  }
  if (const std::string sort = param("sort"); !sort.empty()) {
    const auto parsed = parse_sort(sort);
    if (!parsed || query.view != View::kTested) {
      return bad_parameters(
          fmt::format("sort {} is not one of name, verdict, cores, runtime, memory, decode, "
                      "speedup (the tested view only)",
                      quote_for_message(sort)),
          {"sort"});
    }
    query.sort = *parsed;
  }
  query.task = param("task");
  query.search = param("q");
  if (query.search.size() > 200) {
    return bad_parameters("q is longer than 200 characters", {"q"});
  }
  query.backend = param("backend");
  query.compiler_version = param("compiler_version");
  query.library_version = param("library_version");
  if (params.contains("offset")) {
    CANRUN_ASSIGN_OR_RETURN(query.offset, parse_count("offset", param("offset"), 10'000'000));
  }
  if (params.contains("limit")) {
    CANRUN_ASSIGN_OR_RETURN(query.limit, parse_count("limit", param("limit"), 500));
  }
  return query;
}

//! What an API answer is computed from, once its request has been checked.
struct ApiCall {
  const SpaceIndex& index;
  const QueryParams& params;
  const ModelId* model;  //!< the model a model route's path names; null on the other routes
};

//! One route of the API. Every request to it starts the same way (answer_api): no parameter
//! the route does not take and, on a model route, a valid model id after the path.
struct ApiRoute {
  std::string_view path;     //!< the whole path, or a model route's prefix
  bool model_route = false;  //!< `path` is followed by a model id: /api/model/<org>/<name>
  Route metric = Route::kOther;
  std::vector<std::string_view> parameters = {};  //!< the parameters it takes
  Result<HttpResponse> (*answer)(const ApiCall& call);
};

//! The parameters that choose a model's row (its task and the stack), then `more`.
std::vector<std::string_view> row_parameters(std::initializer_list<std::string_view> more = {}) {
  std::vector<std::string_view> out = {"task", "backend", "compiler_version", "library_version"};
  out.insert(out.end(), more);
  return out;
}

const std::vector<ApiRoute>& api_routes() {
  static const std::vector<ApiRoute> kRoutes = {
      {.path = "/api/versions",
       .metric = Route::kVersions,
       .answer = [](const ApiCall& call) -> Result<HttpResponse> {
         return json_response(call.index.versions_json());
       }},
      {.path = "/api/models",
       .metric = Route::kModels,
       .parameters = {"view", "task", "q", "backend", "compiler_version", "library_version",
                      "offset", "limit", "sort"},
       .answer = [](const ApiCall& call) -> Result<HttpResponse> {
         CANRUN_ASSIGN_OR_RETURN(const ModelsQuery query, models_query(call.params));
         return json_answer(call.index.models_json(query));
       }},
      {.path = "/api/causes",
       .metric = Route::kCauses,
       .parameters = {"backend", "compiler_version", "library_version"},
       .answer =
           [](const ApiCall& call) { return json_answer(call.index.causes_json(call.params)); }},
      {.path = "/api/compare",
       .metric = Route::kCompare,
       .parameters = {"a", "b", "task"},
       .answer =
           [](const ApiCall& call) { return json_answer(call.index.compare_json(call.params)); }},
      {.path = "/api/architectures",
       .metric = Route::kArchitectures,
       .parameters = {"stack", "task", "q", "sort"},
       .answer =
           [](const ApiCall& call) {
             return json_answer(call.index.architectures_json(call.params));
           }},
      {.path = "/api/log/",
       .model_route = true,
       .metric = Route::kModel,
       .parameters = row_parameters(),
       .answer =
           [](const ApiCall& call) {
             return bytes_answer(call.index.log_text(*call.model, call.params),
                                 "text/plain; charset=utf-8");
           }},
      {.path = "/api/image/",
       .model_route = true,
       .metric = Route::kModel,
       .parameters = row_parameters({"role"}),
       .answer =
           [](const ApiCall& call) {
             // A kept image is a PNG; a clip a speech recognizer heard, a WAV.
             return bytes_answer(
                 call.index.image_bytes(*call.model, call.params),
                 std::string(dataset::output_file_media_type(param_of(call.params, "role"))));
           }},
      {.path = "/api/model/",
       .model_route = true,
       .metric = Route::kModel,
       .parameters = row_parameters(),
       .answer =
           [](const ApiCall& call) {
             return json_answer(call.index.model_json(*call.model, call.params));
           }},
  };
  return kRoutes;
}

const ApiRoute* find_api_route(std::string_view path) {
  for (const ApiRoute& route : api_routes()) {
    if (route.model_route ? path.starts_with(route.path) : path == route.path) return &route;
  }
  return nullptr;
}

HttpResponse answer_api(const ApiRoute& route, const SpaceIndex& index,
                        const HttpRequest& request) {
  auto response = [&]() -> Result<HttpResponse> {
    CANRUN_RETURN_IF_ERROR(check_parameters(request.query, route.parameters, route.path));
    std::optional<ModelId> model;
    if (route.model_route) {
      CANRUN_ASSIGN_OR_RETURN(model, model_id_after(request.path, route.path));
    }
    return route.answer({index, request.query, model ? &*model : nullptr});
  }();
  return response.ok() ? std::move(*response) : error_response(response.error());
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
  if (const ApiRoute* api = find_api_route(path)) {
    route_out = api->metric;
    return cached(request,
                  [&](const SpaceIndex& index) { return answer_api(*api, index, request); });
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

}  // namespace canrun::serve
