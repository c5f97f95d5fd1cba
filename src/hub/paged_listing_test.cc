// The Link-header walk that the rankings and a repo's tree share, over a transport that answers
// each URL from a table (the real HTTP path is tested against the Hub stand-in in tests/hub/).
#include "hub/paged_listing.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

namespace canrun::hub {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(PagedListing, NextLinkIsFoundAmongOthers) {
  EXPECT_EQ(next_link(R"(<https://h/api/models?cursor=abc>; rel="next")"),
            "https://h/api/models?cursor=abc");
  EXPECT_EQ(next_link(R"(<https://h/p>; rel="prev", <https://h/n>; rel="next")"), "https://h/n");
  EXPECT_EQ(next_link(R"(<https://h/p>; rel="prev")"), std::nullopt);
  EXPECT_EQ(next_link("garbage"), std::nullopt);
}

// Answers GET url with pages[url]: {body, next url or ""}; records the URLs asked.
class PagesTransport final : public HttpTransport {
 public:
  explicit PagesTransport(std::map<std::string, std::pair<std::string, std::string>> pages,
                          std::vector<std::string>* asked)
      : pages_(std::move(pages)), asked_(asked) {}
  Result<HttpResponse> get(const HttpRequest& request) override {
    asked_->push_back(request.url);
    const auto found = pages_.find(request.url);
    if (found == pages_.end()) return HttpResponse{404, {}, "", request.url};
    std::map<std::string, std::string> headers;
    if (!found->second.second.empty()) {
      headers["link"] = "<" + found->second.second + ">; rel=\"next\"";
    }
    return HttpResponse{200, headers, found->second.first, request.url};
  }

 private:
  std::map<std::string, std::pair<std::string, std::string>> pages_;
  std::vector<std::string>* asked_;
};

struct Walk {
  std::vector<std::string> asked;
  std::vector<int> items;
  Status run(std::map<std::string, std::pair<std::string, std::string>> pages,
             std::size_t max_pages = 10, std::size_t stop_after = 100) {
    HubConfig config;
    config.endpoint = "http://hub";
    HubClient client(config, std::make_unique<PagesTransport>(std::move(pages), &asked),
                     [](std::chrono::milliseconds) {});
    const PagedListing listing{
        "http://hub/api/models?p=1",
        {"http://hub/api/models?"},
        max_pages,
        "the listing",
        "numbers",
        [](std::size_t page, const std::string&) { return "page " + std::to_string(page); }};
    return walk_pages(client, listing,
                      [&](const nlohmann::json& page, const std::string&) -> Result<bool> {
                        for (const auto& item : page) items.push_back(item.get<int>());
                        return items.size() < stop_after;
                      });
  }
};

TEST(PagedListing, FollowsNextLinksToTheLastPage) {
  Walk walk;
  const Status status =
      walk.run({{"http://hub/api/models?p=1", {"[1, 2]", "http://hub/api/models?p=2"}},
                {"http://hub/api/models?p=2", {"[3]", ""}}});
  ASSERT_TRUE(status.ok()) << status.error().message();
  EXPECT_THAT(walk.items, ElementsAre(1, 2, 3));
  EXPECT_EQ(walk.asked.size(), 2u);
}

TEST(PagedListing, StopsWhenTheVisitorHasEnoughOrAPageIsEmpty) {
  Walk enough;
  ASSERT_TRUE(
      enough.run({{"http://hub/api/models?p=1", {"[1, 2]", "http://hub/api/models?p=2"}}}, 10, 2)
          .ok());
  EXPECT_EQ(enough.asked.size(), 1u);
  Walk empty;
  ASSERT_TRUE(empty.run({{"http://hub/api/models?p=1", {"[]", "http://hub/api/models?p=2"}}}).ok());
  EXPECT_EQ(empty.asked.size(), 1u);
}

TEST(PagedListing, RefusesALoopAPageCapAnotherHostAndANonList) {
  Walk loop;
  const Status looped =
      loop.run({{"http://hub/api/models?p=1", {"[1]", "http://hub/api/models?p=2"}},
                {"http://hub/api/models?p=2", {"[2]", "http://hub/api/models?p=1"}}});
  ASSERT_FALSE(looped.ok());
  EXPECT_EQ(looped.error().code(), ErrorCode::kCorrupt);
  EXPECT_THAT(looped.error().message(), HasSubstr("the listing: the Link header leads back to"));
  EXPECT_THAT(looped.error().message(), HasSubstr("(a pagination loop)"));

  Walk capped;
  const Status too_long =
      capped.run({{"http://hub/api/models?p=1", {"[1]", "http://hub/api/models?p=2"}},
                  {"http://hub/api/models?p=2", {"[2]", "http://hub/api/models?p=3"}}},
                 1);
  ASSERT_FALSE(too_long.ok());
  EXPECT_EQ(too_long.error().message(), "the listing runs past 1 pages");

  Walk elsewhere;
  const Status away =
      elsewhere.run({{"http://hub/api/models?p=1", {"[1]", "http://evil/api/models?p=2"}}});
  ASSERT_FALSE(away.ok());
  EXPECT_THAT(away.error().message(), HasSubstr("page 1: the next page"));
  EXPECT_THAT(away.error().message(), HasSubstr("is not on http://hub"));
  EXPECT_THAT(elsewhere.asked, ElementsAre("http://hub/api/models?p=1"));

  Walk object;
  const Status not_list = object.run({{"http://hub/api/models?p=1", {"{}", ""}}});
  ASSERT_FALSE(not_list.ok());
  EXPECT_EQ(not_list.error().message(), "page 1: a JSON object where a list of numbers belongs");
}

}  // namespace
}  // namespace canrun::hub
