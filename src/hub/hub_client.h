// HubClient: the Hugging Face Hub's HTTP API as canrun uses it, over an HttpTransport.
//
// Honours HF_ENDPOINT (default https://huggingface.co), HF_TOKEN (sent as a bearer token),
// HF_HUB_OFFLINE (no request is made; every call fails kUnavailable so callers fall back to
// what is on disk). Retries 429 and 5xx answers with exponential backoff, waiting what
// Retry-After says when the server says it (capped), and gives up after max_attempts with an
// error that says how many answers were rate limits. Maps 401/403 to "gated or private",
// 404 to kNotFound.
//
// Thread safety: one thread at a time (the transport is not shared).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"
#include "hub/http_transport.h"

namespace canrun::hub {

struct HubConfig {
  std::string endpoint = "https://huggingface.co";  //!< no trailing slash
  std::optional<std::string> token;                 //!< HF_TOKEN
  bool offline = false;                             //!< HF_HUB_OFFLINE
  int max_attempts = 5;                             //!< tries per request, 429/5xx retried
  std::chrono::milliseconds backoff{500};           //!< first wait without Retry-After; doubles
  std::chrono::milliseconds max_wait{30'000};       //!< cap on one wait (Retry-After included)

  //! From the environment (HF_ENDPOINT, HF_TOKEN, HF_HUB_OFFLINE); errors on an endpoint
  //! that is not an http(s) URL.
  static Result<HubConfig> from_environment();
};

//! Percent-encodes `text` for a URL path segment or query value; `keep_slash` leaves '/'.
std::string url_encode(std::string_view text, bool keep_slash);

class HubClient {
 public:
  using Sleeper = std::function<void(std::chrono::milliseconds)>;

  //! `sleeper` waits between retries (std::this_thread::sleep_for when empty).
  HubClient(HubConfig config, std::unique_ptr<HttpTransport> transport, Sleeper sleeper = {});

  const HubConfig& config() const { return config_; }

  //! GET `url_or_path` (a path is joined to the endpoint) with retries. Any 2xx or 304 is
  //! returned; other statuses become Errors naming the URL and status.
  Result<HttpResponse> get(std::string_view url_or_path,
                           std::vector<std::pair<std::string, std::string>> headers = {});

  //! GET with the body going to `sink` as it arrives (HttpTransport::get_streamed), for files
  //! too large to hold. As get() (token, offline, 401/403 gated, 404 not found, 429 and 5xx
  //! retried), except that only a 2xx answer reaches the sink, and nothing is retried once it
  //! has: the caller continues an interrupted body with a Range request.
  Result<HttpResponse> get_streamed(std::string_view url_or_path,
                                    std::vector<std::pair<std::string, std::string>> headers,
                                    BodySink& sink);

  //! GET and return the body (the caller parses it and names the URL in its errors).
  Result<std::string> get_text(std::string_view url_or_path);

  //! Bytes [offset, offset+length) of a repo file and the file's full size (Content-Range).
  //! A server that answers 200 to a Range request is refused rather than read whole.
  struct Slice {
    std::string bytes;
    std::uint64_t file_size = 0;
  };
  Result<Slice> get_range(std::string_view url, std::uint64_t offset, std::uint64_t length);

 private:
  using Attempt = std::function<Result<HttpResponse>(const HttpRequest&)>;
  //! The request get() and get_streamed() send: the URL joined to the endpoint, the token.
  Result<HttpRequest> make_request(std::string_view url_or_path,
                                   std::vector<std::pair<std::string, std::string>> headers) const;
  //! Sends `request` through `attempt` until it succeeds, fails for good, or `may_retry` says no.
  Result<HttpResponse> send_with_retries(const HttpRequest& request, const Attempt& attempt,
                                         const std::function<bool()>& may_retry);

  HubConfig config_;
  std::unique_ptr<HttpTransport> transport_;
  Sleeper sleeper_;
};

//! The default transport options (user agent "canrun/<version>", timeouts).
TransportOptions default_transport_options();

}  // namespace canrun::hub
