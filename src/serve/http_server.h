// The Space's HTTP server, behind an interface of ours: the rest of canrun sees requests and
// responses as plain values and never the HTTP library (Boost.Beast stays in http_server.cc).
//
// Contract of the server:
// - HTTP/1.1 with keep-alive; GET and HEAD only (others get 405 before the handler runs).
// - A request's header block is limited to ServerLimits::max_header_bytes (431 beyond it) and
//   its body to max_body_bytes (413); a malformed request gets 400 and the connection closed.
// - Each request must arrive whole within request_deadline of the connection becoming ready to
//   read (an idle keep-alive connection included), so a client dripping bytes holds only a
//   socket, never a worker thread, and only that long.
// - At most max_connections connections at once; one more is answered 503 and closed.
// - The request target is decoded and checked (url.h) before the handler sees it: bad
//   percent-encoding, invalid UTF-8, NUL or a ".." segment get 400.
//
// Thread safety: the handler is called from several worker threads at once and must be
// thread-safe. start() and stop() are called from one thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/result.h"

namespace canrun::serve {

struct HttpRequest {
  std::string method;                        //!< "GET" or "HEAD"
  std::string target;                        //!< as sent, e.g. "/api/models?q=qwen"
  std::string path;                          //!< decoded path, e.g. "/api/models"
  std::map<std::string, std::string> query;  //!< decoded query parameters
  std::string if_none_match;                 //!< the If-None-Match header, or empty
  bool accepts_gzip = false;                 //!< Accept-Encoding names gzip
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::shared_ptr<const std::string> body;  //!< shared so cached bodies are not copied
  std::vector<std::pair<std::string, std::string>> headers;  //!< extra headers
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

struct ServerLimits {
  std::size_t max_header_bytes = 8 * 1024;
  std::size_t max_body_bytes = 16 * 1024;
  std::chrono::milliseconds request_deadline{10'000};
  std::size_t max_connections = 4096;
  unsigned threads = 0;  //!< worker threads; 0 = one per core
};

class HttpServer {
 public:
  virtual ~HttpServer() = default;

  //! Binds host:port (port 0 picks a free one) and starts serving on worker threads.
  //! The error names the address when it cannot be bound.
  static Result<std::unique_ptr<HttpServer>> start(const std::string& host, std::uint16_t port,
                                                   const ServerLimits& limits, HttpHandler handler);

  //! The port actually bound.
  virtual std::uint16_t port() const = 0;
  //! Connections open now.
  virtual std::size_t open_connections() const = 0;
  //! Requests refused before the handler (malformed, too large, over the connection cap).
  virtual std::uint64_t rejected_requests() const = 0;
  //! Stops accepting, closes connections and joins the workers. Idempotent.
  virtual void stop() = 0;
};

//! A JSON error body {"error": message, "parameters": [...]} as a response.
HttpResponse json_error(int status, const std::string& message,
                        const std::vector<std::string>& parameters = {});

}  // namespace canrun::serve
