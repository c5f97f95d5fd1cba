// HttpTransport: the seam between canrun's Hub code and the HTTP library. One GET at a time,
// redirects followed up to a limit, the body capped so that a server that ignores a Range
// header can never make canrun download weights. The libcurl implementation lives in
// curl_transport.cc and nothing else includes curl.
//
// Thread safety: a transport is used by one thread at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/result.h"

namespace canrun::hub {

struct HttpRequest {
  std::string url;                                           //!< absolute http(s) URL
  std::vector<std::pair<std::string, std::string>> headers;  //!< extra request headers
};

struct HttpResponse {
  long status = 0;                             //!< HTTP status of the last response
  std::map<std::string, std::string> headers;  //!< lower-cased names; the last of each wins
  std::string body;                            //!< at most TransportOptions::max_body_bytes
  std::string url;                             //!< the URL after redirects

  //! A header by its lower-case name, or nullopt.
  std::optional<std::string> header(const std::string& lower_name) const;
};

struct TransportOptions {
  std::string user_agent;                               //!< sent on every request
  std::chrono::milliseconds connect_timeout{10'000};    //!< TCP + TLS set-up
  std::chrono::milliseconds total_timeout{60'000};      //!< whole request
  long max_redirects = 10;                              //!< more is a redirect loop
  std::uint64_t max_body_bytes = 200ull * 1024 * 1024;  //!< larger bodies are refused
};

class HttpTransport {
 public:
  virtual ~HttpTransport() = default;
  //! Performs the GET. An HTTP error status is a response, not an Error; Errors are for
  //! transport failures (kUnavailable: cannot connect; kTimeout; kCorrupt: redirect loop,
  //! body over the cap).
  virtual Result<HttpResponse> get(const HttpRequest& request) = 0;
};

//! The libcurl transport.
std::unique_ptr<HttpTransport> make_curl_transport(const TransportOptions& options);

}  // namespace canrun::hub
