// The only file that sees libcurl.
#include <curl/curl.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <mutex>

#include "core/text.h"
#include "hub/http_transport.h"

namespace canrun::hub {

std::optional<std::string> HttpResponse::header(const std::string& lower_name) const {
  const auto it = headers.find(lower_name);
  if (it == headers.end()) return std::nullopt;
  return it->second;
}

std::optional<std::string> HttpResponse::earliest_header(const std::string& lower_name) const {
  for (const auto& hop : redirect_headers) {
    const auto it = hop.find(lower_name);
    if (it != hop.end()) return it->second;
  }
  return header(lower_name);
}

Result<HttpResponse> HttpTransport::get_streamed(const HttpRequest& request, BodySink& sink) {
  CANRUN_ASSIGN_OR_RETURN(HttpResponse response, get(request));
  const std::string body = std::move(response.body);
  response.body.clear();
  CANRUN_RETURN_IF_ERROR(sink.begin(response));
  if (!body.empty()) CANRUN_RETURN_IF_ERROR(sink.write(body));
  return response;
}

namespace {

struct Transfer {
  CURL* curl = nullptr;
  std::string request_url;
  HttpResponse response;
  std::uint64_t max_body_bytes = 0;
  bool body_too_large = false;
  // Streamed transfers: the body goes to `sink`, which sees the head once, first.
  BodySink* sink = nullptr;
  bool sink_began = false;
  std::optional<Error> sink_error;
};

long response_code(CURL* curl) {
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  return status;
}

std::string effective_url(CURL* curl, const std::string& fallback) {
  char* effective = nullptr;
  curl_easy_getinfo(curl, CURLINFO_EFFECTIVE_URL, &effective);
  return effective != nullptr ? effective : fallback;
}

//! Hands the final answer's head to the sink, once; false when the sink refuses it.
bool begin_sink(Transfer& transfer) {
  if (transfer.sink_began) return !transfer.sink_error.has_value();
  transfer.sink_began = true;
  transfer.response.status = response_code(transfer.curl);
  transfer.response.url = effective_url(transfer.curl, transfer.request_url);
  auto status = transfer.sink->begin(transfer.response);
  if (!status.ok()) transfer.sink_error = status.error();
  return status.ok();
}

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  const std::size_t bytes = size * count;
  if (transfer->sink != nullptr) {
    const long status = response_code(transfer->curl);
    if (status >= 300 && status < 400) return bytes;  // a redirect's own body, never the file's
    if (!begin_sink(*transfer)) return 0;             // aborts the transfer
    auto written = transfer->sink->write(std::string_view(data, bytes));
    if (!written.ok()) {
      transfer->sink_error = written.error();
      return 0;
    }
    return bytes;
  }
  if (transfer->response.body.size() + bytes > transfer->max_body_bytes) {
    transfer->body_too_large = true;
    return 0;  // aborts the transfer
  }
  transfer->response.body.append(data, bytes);
  return bytes;
}

std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  std::string_view line(data, size * count);
  if (line.starts_with("HTTP/")) {
    // A new answer after a redirect (or a 1xx): the previous answer's headers become a hop.
    if (!transfer->response.headers.empty()) {
      transfer->response.redirect_headers.push_back(std::move(transfer->response.headers));
    }
    transfer->response.headers.clear();
    return size * count;
  }
  const auto colon = line.find(':');
  if (colon == std::string_view::npos) return size * count;
  std::string name(line.substr(0, colon));
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::string_view value = line.substr(colon + 1);
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == '\r' || value.back() == '\n' || value.back() == ' ')) {
    value.remove_suffix(1);
  }
  transfer->response.headers[name] = std::string(value);
  return size * count;
}

class CurlTransport final : public HttpTransport {
 public:
  explicit CurlTransport(TransportOptions options) : options_(std::move(options)) {
    static std::once_flag init;
    std::call_once(init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
    handle_ = curl_easy_init();
  }
  ~CurlTransport() override {
    if (handle_ != nullptr) curl_easy_cleanup(handle_);
  }
  CurlTransport(const CurlTransport&) = delete;
  CurlTransport& operator=(const CurlTransport&) = delete;

  Result<HttpResponse> get(const HttpRequest& request) override {
    return perform(request, nullptr);
  }

  Result<HttpResponse> get_streamed(const HttpRequest& request, BodySink& sink) override {
    return perform(request, &sink);
  }

 private:
  Result<HttpResponse> perform(const HttpRequest& request, BodySink* sink) {
    if (handle_ == nullptr) return internal_error("libcurl could not be initialised");
    CURL* curl = handle_;
    curl_easy_reset(curl);
    Transfer transfer;
    transfer.curl = curl;
    transfer.request_url = request.url;
    transfer.max_body_bytes = options_.max_body_bytes;
    transfer.sink = sink;
    curl_slist* headers = nullptr;
    for (const auto& [name, value] : request.headers) {
      headers = curl_slist_append(headers, fmt::format("{}: {}", name, value).c_str());
    }
    curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_USERAGENT, options_.user_agent.c_str());
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                     static_cast<long>(options_.connect_timeout.count()));
    if (sink == nullptr) {
      curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(options_.total_timeout.count()));
      curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "");
    } else {
      // A file's bytes as stored (no encoding, so Range offsets and sizes are the file's), for
      // as long as they keep coming.
      curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1024L);
      curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME,
                       std::max(1L, static_cast<long>(options_.stall_timeout.count() / 1000)));
    }
    curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(curl, CURLOPT_MAXREDIRS, options_.max_redirects);
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    // The token must not follow a redirect to another host (the Hub redirects file downloads
    // to its CDN); libcurl drops Authorization on a host change unless told otherwise.
    curl_easy_setopt(curl, CURLOPT_UNRESTRICTED_AUTH, 0L);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &transfer);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, &transfer);
    const CURLcode code = curl_easy_perform(curl);
    curl_slist_free_all(headers);
    if (transfer.sink_error) return *transfer.sink_error;
    const std::string where = quote_for_message(request.url, 200);
    if (transfer.body_too_large) {
      return corrupt(fmt::format("GET {}: the answer is larger than {} bytes; refused", where,
                                 options_.max_body_bytes));
    }
    switch (code) {
      case CURLE_OK:
        break;
      case CURLE_TOO_MANY_REDIRECTS:
        return corrupt(fmt::format("GET {}: more than {} redirects (a redirect loop?)", where,
                                   options_.max_redirects));
      case CURLE_OPERATION_TIMEDOUT:
        return Error(ErrorCode::kTimeout,
                     fmt::format("GET {}: timed out ({})", where, curl_easy_strerror(code)));
      default:
        // Cannot resolve or connect, a dropped connection, a body cut short: the Hub (or the
        // way to it) is unavailable, and the caller may try again.
        return Error(ErrorCode::kUnavailable,
                     fmt::format("GET {}: {}", where, curl_easy_strerror(code)));
    }
    if (sink != nullptr && !begin_sink(transfer)) return *transfer.sink_error;  // empty body
    transfer.response.status = response_code(curl);
    transfer.response.url = effective_url(curl, request.url);
    return std::move(transfer.response);
  }

  TransportOptions options_;
  CURL* handle_ = nullptr;
};

}  // namespace

std::unique_ptr<HttpTransport> make_curl_transport(const TransportOptions& options) {
  return std::make_unique<CurlTransport>(options);
}

}  // namespace canrun::hub
