// The retry policy of HubClient, over a transport that answers from a script and records each
// request, and a sleeper that records each wait (the real HTTP path is tested against the Hub
// stand-in in tests/hub/).
#include "hub/hub_client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <deque>

namespace canrun::hub {
namespace {

using std::chrono::milliseconds;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class ScriptedTransport final : public HttpTransport {
 public:
  ScriptedTransport(std::deque<Result<HttpResponse>> script, std::vector<HttpRequest>* requests)
      : script_(std::move(script)), requests_(requests) {}
  Result<HttpResponse> get(const HttpRequest& request) override {
    requests_->push_back(request);
    auto next = script_.front();
    if (script_.size() > 1) script_.pop_front();
    return next;
  }

 private:
  std::deque<Result<HttpResponse>> script_;
  std::vector<HttpRequest>* requests_;
};

HttpResponse answer(long status, std::map<std::string, std::string> headers = {}) {
  return HttpResponse{status, std::move(headers), "[]", "http://hub/api/models"};
}

struct ClientHarness {
  std::vector<HttpRequest> requests;
  std::vector<milliseconds> waits;
  HubClient client(std::deque<Result<HttpResponse>> script, HubConfig config = {}) {
    config.endpoint = "http://hub";
    return HubClient(config, std::make_unique<ScriptedTransport>(std::move(script), &requests),
                     [this](milliseconds wait) { waits.push_back(wait); });
  }
};

TEST(HubClient, RetryAfterIsHonouredAndBackoffDoublesWithoutIt) {
  ClientHarness harness;
  auto client =
      harness.client({answer(429, {{"retry-after", "3"}}), answer(503), answer(502), answer(200)});
  auto response = client.get("/api/models");
  ASSERT_TRUE(response.ok()) << response.error().message();
  EXPECT_EQ(response->status, 200);
  EXPECT_THAT(harness.waits,
              ElementsAre(milliseconds(3000), milliseconds(1000), milliseconds(2000)));
}

TEST(HubClient, RetryAfterIsCapped) {
  ClientHarness harness;
  auto client = harness.client({answer(429, {{"retry-after", "86400"}}), answer(200)});
  ASSERT_TRUE(client.get("/x").ok());
  EXPECT_THAT(harness.waits, ElementsAre(milliseconds(30'000)));
}

TEST(HubClient, RateLimitStormGivesUpAfterMaxAttempts) {
  ClientHarness harness;
  auto client = harness.client({answer(429, {{"retry-after", "0"}})});
  auto response = client.get("/api/models");
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.error().code(), ErrorCode::kUnavailable);
  EXPECT_THAT(response.error().message(),
              HasSubstr("rate limited: HTTP 429 Too Many Requests on all 5 attempts"));
  EXPECT_EQ(harness.requests.size(), 5u);
}

TEST(HubClient, ClientErrorsAreNotRetried) {
  ClientHarness harness;
  auto client = harness.client({answer(404)});
  auto response = client.get("/api/models/a/b");
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.error().code(), ErrorCode::kNotFound);
  EXPECT_EQ(harness.requests.size(), 1u);
}

TEST(HubClient, TokenIsSentAsBearerAndOfflineSendsNothing) {
  ClientHarness harness;
  HubConfig config;
  config.token = "hf_secret";
  auto client = harness.client({answer(200)}, config);
  ASSERT_TRUE(client.get("/api/models").ok());
  ASSERT_EQ(harness.requests.size(), 1u);
  EXPECT_THAT(harness.requests[0].headers, ElementsAre(std::pair<std::string, std::string>(
                                               "Authorization", "Bearer hf_secret")));
  ClientHarness offline_harness;
  HubConfig offline;
  offline.offline = true;
  auto offline_client = offline_harness.client({answer(200)}, offline);
  auto response = offline_client.get("/api/models");
  ASSERT_FALSE(response.ok());
  EXPECT_THAT(response.error().message(), HasSubstr("HF_HUB_OFFLINE is set"));
  EXPECT_TRUE(offline_harness.requests.empty());
}

TEST(HubClient, UnreachableHubIsTriedTwice) {
  ClientHarness harness;
  auto client = harness.client({Error(ErrorCode::kUnavailable, "Couldn't connect to server")});
  auto response = client.get("/api/models");
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(harness.requests.size(), 2u);
}

TEST(HubClient, UrlEncodingKeepsOnlyUnreservedCharacters) {
  EXPECT_EQ(url_encode("refs/pr/1", false), "refs%2Fpr%2F1");
  EXPECT_EQ(url_encode("sub dir/model.safetensors", true), "sub%20dir/model.safetensors");
}

}  // namespace
}  // namespace canrun::hub
