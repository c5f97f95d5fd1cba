// HttpTransport: the seam between canrun's Hub code and the HTTP library. One GET at a time,
// redirects followed up to a limit, the body capped so that a server that ignores a Range
// header can never make canrun download weights by accident. Downloading weights on purpose
// goes through get_streamed, whose body goes to a BodySink as it arrives (a file, never memory).
// The libcurl implementation lives in curl_transport.cc and nothing else includes curl.
//
// Thread safety: a transport is used by one thread at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
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
  //! The headers of each redirect answer before the final one, in order (the Hub's own answer
  //! carries X-Repo-Commit and X-Linked-Etag; its CDN's final answer does not).
  std::vector<std::map<std::string, std::string>> redirect_headers = {};

  //! A header of the final answer by its lower-case name, or nullopt.
  std::optional<std::string> header(const std::string& lower_name) const;
  //! A header from the earliest answer of the redirect chain that carries it, or nullopt.
  std::optional<std::string> earliest_header(const std::string& lower_name) const;
};

//! Where get_streamed puts a body as it arrives.
class BodySink {
 public:
  virtual ~BodySink() = default;
  //! Called once per transfer with the final answer's status, headers and URL (body empty),
  //! before its first byte; also for an empty body. An Error aborts the transfer and is what
  //! get_streamed returns.
  virtual Status begin(const HttpResponse& head) = 0;
  //! The next bytes of the body. An Error aborts the transfer and is what get_streamed returns.
  virtual Status write(std::string_view bytes) = 0;
};

struct TransportOptions {
  std::string user_agent;                               //!< sent on every request
  std::chrono::milliseconds connect_timeout{10'000};    //!< TCP + TLS set-up
  std::chrono::milliseconds total_timeout{60'000};      //!< whole request
  long max_redirects = 10;                              //!< more is a redirect loop
  std::uint64_t max_body_bytes = 200ull * 1024 * 1024;  //!< larger bodies are refused
  //! get_streamed has no total timeout (weights take what they take); it gives up when fewer
  //! than 1024 bytes a second arrive for this long.
  std::chrono::milliseconds stall_timeout{60'000};
};

class HttpTransport {
 public:
  virtual ~HttpTransport() = default;
  //! Performs the GET. An HTTP error status is a response, not an Error; Errors are for
  //! transport failures (kUnavailable: cannot connect; kTimeout; kCorrupt: redirect loop,
  //! body over the cap).
  virtual Result<HttpResponse> get(const HttpRequest& request) = 0;
  //! Performs the GET with the body going to `sink` as it arrives; the returned response has
  //! an empty body. No content encoding is asked for, so sizes and Range offsets are the
  //! file's. Errors as get(), plus the sink's own. This default buffers the body through get()
  //! (capped by max_body_bytes): it suits in-memory test transports; the curl transport streams.
  virtual Result<HttpResponse> get_streamed(const HttpRequest& request, BodySink& sink);
};

//! The libcurl transport.
std::unique_ptr<HttpTransport> make_curl_transport(const TransportOptions& options);

}  // namespace canrun::hub
