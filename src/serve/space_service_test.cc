#include "serve/space_service.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "dataset/test_rows.h"
#include "serve/static_assets.h"

namespace canrun::serve {
namespace {

using nlohmann::json;

std::shared_ptr<const SpaceIndex> index_with(std::string result) {
  auto row = dataset::testing::full_row("Qwen/Qwen3-0.6B");
  row.result = *parse_verdict_result(result);
  if (row.result != VerdictResult::kPass) row.error = "boom";
  IndexInputs inputs;
  auto key = dataset::stack_key_of(row);
  inputs.stacks.push_back(
      std::make_shared<const StackVerdicts>(*key, std::vector<dataset::VerdictRow>{row}));
  inputs.catalog.selected["text-generation"] = {{"Qwen/Qwen3-0.6B", ""}};
  return SpaceIndex::build(std::move(inputs));
}

HttpRequest get(std::string path, std::map<std::string, std::string> query = {}) {
  HttpRequest request;
  request.method = "GET";
  request.path = std::move(path);
  request.query = std::move(query);
  return request;
}

SpaceService make_service(std::shared_ptr<const SpaceIndex> index) {
  return SpaceService(StaticAssets::from_contents({{"index.html", "<html>page</html>"},
                                                   {"app.js", std::string(4000, 'x')}}),
                      std::move(index), nullptr);
}

TEST(SpaceService, ANewIndexIsServedAtOnceDespiteTheCache) {
  SpaceService service = make_service(index_with("PASS"));
  const auto before = service.handle(get("/api/models"));
  ASSERT_EQ(before.status, 200);
  EXPECT_EQ(json::parse(*before.body)["models"][0]["status"], "PASS");
  // A second identical query is answered from the cache: the very same body.
  EXPECT_EQ(service.handle(get("/api/models")).body, before.body);
  service.set_index(index_with("FAIL_OOM"));
  const auto after = service.handle(get("/api/models"));
  EXPECT_EQ(json::parse(*after.body)["models"][0]["status"], "FAIL_OOM");
}

TEST(SpaceService, BadParametersAre400NamingThem) {
  SpaceService service = make_service(index_with("PASS"));
  const auto response = service.handle(get("/api/models", {{"view", "all"}, {"colour", "red"}}));
  EXPECT_EQ(response.status, 400);
  EXPECT_EQ(json::parse(*response.body)["parameters"], json({"colour"}));
  const auto view = service.handle(get("/api/models", {{"view", "all"}}));
  EXPECT_EQ(json::parse(*view.body)["parameters"], json({"view"}));
  EXPECT_EQ(service.handle(get("/api/model/not-an-id")).status, 400);
  EXPECT_EQ(service.handle(get("/api/nothing")).status, 404);
}

// Every API route starts the same way: a parameter it does not take, or a bad model id in a
// model route's path, is a 400 naming it, before the index is asked.
TEST(SpaceService, EveryRouteChecksItsParametersAndModelIdFirst) {
  SpaceService service = make_service(index_with("FAIL_OOM"));
  const auto parameters = [&](std::string path, std::map<std::string, std::string> query) {
    const auto response = service.handle(get(std::move(path), std::move(query)));
    EXPECT_EQ(response.status, 400);
    return json::parse(*response.body)["parameters"];
  };
  EXPECT_EQ(parameters("/api/versions", {{"x", "1"}}), json({"x"}));
  EXPECT_EQ(json::parse(*service.handle(get("/api/versions", {{"x", "1"}})).body)["error"],
            "/api/versions takes no parameters");
  for (const char* path : {"/api/causes", "/api/compare", "/api/model/Qwen/Qwen3-0.6B",
                           "/api/log/Qwen/Qwen3-0.6B", "/api/image/Qwen/Qwen3-0.6B"}) {
    EXPECT_EQ(parameters(path, {{"colour", "red"}, {"size", "2"}}), json({"colour", "size"}))
        << path;
  }
  EXPECT_EQ(parameters("/api/image/Qwen/Qwen3-0.6B", {{"role", "image"}, {"colour", "red"}}),
            json({"colour"}));
  for (const char* path : {"/api/model/not-an-id", "/api/log/bad..id/x", "/api/image/"}) {
    EXPECT_EQ(parameters(path, {}), json({"model"})) << path;
  }
  // Past the checks, the index answers: this row keeps no log.
  EXPECT_EQ(service.handle(get("/api/log/Qwen/Qwen3-0.6B", {{"task", "text-generation"}})).status,
            404);
  EXPECT_EQ(service.handle(get("/api/causes")).status, 200);
}

TEST(SpaceService, VersionsCarryWhatThePageNeedsOfEachTask) {
  SpaceService service = make_service(index_with("PASS"));
  const auto response = service.handle(get("/api/versions"));
  ASSERT_EQ(response.status, 200);
  const json versions = json::parse(*response.body);
  EXPECT_EQ(versions["tasks"], json({"text-generation"}));  // the dataset's tasks, as before
  ASSERT_FALSE(versions["task_details"].empty());
  const json& generation = versions["task_details"][0];
  EXPECT_EQ(generation["name"], "text-generation");
  EXPECT_EQ(generation["library"], "transformers");
  EXPECT_EQ(generation["comparison"], "tokens");
  EXPECT_EQ(generation["display"], "text");
  EXPECT_EQ(generation["generates_text"], true);
  EXPECT_TRUE(generation["speed_meaning"].get<std::string>().starts_with(
      "Run time, first token and decode tokens/s measure 32 greedy tokens"));
}

TEST(SpaceService, AnIndexErrorsStatusAndParametersComeFromItsCodeAndSubjects) {
  SpaceService service = make_service(index_with("PASS"));
  const auto task = service.handle(get("/api/models", {{"task", "text-to-nothing"}}));
  EXPECT_EQ(task.status, 400);  // kInvalidArgument
  EXPECT_EQ(json::parse(*task.body)["parameters"], json({"task"}));
  const auto missing = service.handle(get("/api/model/nobody/nothing"));
  EXPECT_EQ(missing.status, 404);  // kNotFound
  EXPECT_FALSE(json::parse(*missing.body).contains("parameters"));
  EXPECT_NE(json::parse(*missing.body)["error"].get<std::string>().find("nobody/nothing"),
            std::string::npos);
}

TEST(SpaceService, OnlyTheShippedFilesAreServed) {
  SpaceService service = make_service(index_with("PASS"));
  EXPECT_EQ(service.handle(get("/")).status, 200);
  EXPECT_EQ(*service.handle(get("/model/Qwen/Qwen3-0.6B")).body, "<html>page</html>");
  for (const char* path : {"/etc/passwd", "/index.html/..", "/web/app.js", "/app.js.map"}) {
    EXPECT_EQ(service.handle(get(path)).status, 404) << path;
  }
}

TEST(StaticAssets, EtagGivesNotModifiedAndGzipIsSmaller) {
  const auto assets = StaticAssets::from_contents({{"app.js", std::string(4000, 'x')}});
  const StaticAsset* asset = assets.find("/app.js");
  ASSERT_NE(asset, nullptr);
  HttpRequest request = get("/app.js");
  request.accepts_gzip = true;
  const auto packed = assets.respond(*asset, request);
  EXPECT_EQ(packed.status, 200);
  EXPECT_LT(packed.body->size(), 100u);
  request.if_none_match = asset->etag;
  EXPECT_EQ(assets.respond(*asset, request).status, 304);
  request.if_none_match = "\"something-else\"";
  EXPECT_EQ(assets.respond(*asset, request).status, 200);
  EXPECT_EQ(assets.find("/missing.js"), nullptr);
}

TEST(ServeMetrics, PrometheusTextCountsRequestsByRouteAndClass) {
  SpaceService service = make_service(index_with("PASS"));
  (void)service.handle(get("/api/models"));
  (void)service.handle(get("/api/models", {{"limit", "x"}}));
  const auto text = *service.handle(get("/metrics")).body;
  EXPECT_NE(text.find("canrun_http_requests_total{route=\"api_models\",code=\"2xx\"} 1\n"),
            std::string::npos);
  EXPECT_NE(text.find("canrun_http_requests_total{route=\"api_models\",code=\"4xx\"} 1\n"),
            std::string::npos);
  EXPECT_NE(text.find("canrun_index_rows 1\n"), std::string::npos);
}

}  // namespace
}  // namespace canrun::serve
