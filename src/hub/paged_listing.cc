#include "hub/paged_listing.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "core/text.h"

namespace canrun::hub {

std::optional<std::string> next_link(std::string_view header) {
  // Link: <url>; rel="next", <url>; rel="prev"
  std::size_t pos = 0;
  while (pos < header.size()) {
    const std::size_t open = header.find('<', pos);
    if (open == std::string_view::npos) return std::nullopt;
    const std::size_t close = header.find('>', open);
    if (close == std::string_view::npos) return std::nullopt;
    const std::size_t end = std::min(header.find(",", close), header.size());
    const std::string_view params = header.substr(close + 1, end - close - 1);
    if (params.find("rel=\"next\"") != std::string_view::npos ||
        params.find("rel=next") != std::string_view::npos) {
      return std::string(header.substr(open + 1, close - open - 1));
    }
    pos = end + 1;
  }
  return std::nullopt;
}

Status walk_pages(HubClient& client, const PagedListing& listing,
                  const std::function<Result<bool>(const nlohmann::json& page,
                                                   const std::string& where)>& visit) {
  std::string url = listing.first_url;
  std::set<std::string> seen_urls;
  for (std::size_t page = 1;; ++page) {
    if (page > listing.max_pages) {
      return corrupt(fmt::format("{} runs past {} pages", listing.what, listing.max_pages));
    }
    if (!seen_urls.insert(url).second) {
      return corrupt(fmt::format("{}: the Link header leads back to {} (a pagination loop)",
                                 listing.what, quote_for_message(url, 200)));
    }
    CANRUN_ASSIGN_OR_RETURN(HttpResponse response, client.get(url));
    const std::string where = listing.where(page, url);
    const auto body = nlohmann::json::parse(response.body, nullptr, false);
    if (body.is_discarded()) {
      return corrupt(
          fmt::format("{}: not valid JSON ({} bytes; truncated?)", where, response.body.size()));
    }
    if (!body.is_array()) {
      return corrupt(fmt::format("{}: a JSON {} where a list of {} belongs", where,
                                 body.type_name(), listing.items));
    }
    CANRUN_ASSIGN_OR_RETURN(const bool go_on, visit(body, where));
    if (!go_on) return ok_status();
    const auto link = response.header("link");
    const auto next = link ? next_link(*link) : std::nullopt;
    if (!next || body.empty()) return ok_status();
    const bool same_api =
        std::any_of(listing.next_prefixes.begin(), listing.next_prefixes.end(),
                    [&](const std::string& prefix) { return next->starts_with(prefix); });
    if (!same_api) {
      return corrupt(fmt::format("{}: the next page {} is not on {}", where,
                                 quote_for_message(*next, 200), client.config().endpoint));
    }
    url = *next;
  }
}

}  // namespace canrun::hub
