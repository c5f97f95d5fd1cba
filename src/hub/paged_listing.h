// Hub listings that page by the Link header (rel="next"): a task's models (/api/models) and a
// repo's files (/api/models/{id}/tree/{commit}). One walk for both, so their rules cannot drift:
// the last page is the one without a next link (or an empty one); a next page must stay on the
// same Hub API (a Hub answer cannot send canrun's token elsewhere); a URL seen before is a loop
// and a listing past its page cap is refused, both as corrupt answers.
//
// Thread safety: walk_pages uses the caller's HubClient; one walk per client at a time.
#pragma once

#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "hub/hub_client.h"

namespace canrun::hub {

//! The rel="next" URL of a Link header value, if any.
std::optional<std::string> next_link(std::string_view link_header);

struct PagedListing {
  std::string first_url;  //!< the first page's URL
  //! A next page must start with one of these (the same Hub's API).
  std::vector<std::string> next_prefixes;
  std::size_t max_pages = 1000;
  //! Names the listing in messages, e.g. "rankings", "the tree of org/model at <commit>".
  std::string what;
  //! What one page's JSON array lists, for messages: "models", "files".
  std::string items;
  //! Names page `page` (1-based) at `url` in messages, e.g. "rankings page 2 (URL)".
  std::function<std::string(std::size_t page, const std::string& url)> where;
};

//! Gets each page, checks it is a JSON array and hands it to `visit` with the page's `where`;
//! `visit` returns whether to go on (false: the caller has what it needs). The first error,
//! of the client, a page or `visit`, ends the walk.
Status walk_pages(
    HubClient& client, const PagedListing& listing,
    const std::function<Result<bool>(const nlohmann::json& page, const std::string& where)>& visit);

}  // namespace canrun::hub
