#include "hub/hub_client.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "core/log.h"
#include "core/text.h"
#include "core/version.h"

namespace canrun::hub {
namespace {

std::optional<std::string> env(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

// huggingface_hub's constants._is_true.
bool env_is_true(const char* name) {
  auto value = env(name);
  if (!value) return false;
  std::transform(value->begin(), value->end(), value->begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return *value == "1" || *value == "ON" || *value == "YES" || *value == "TRUE";
}

//! Retry-After as delay-seconds; nullopt for an HTTP date or garbage.
std::optional<std::chrono::milliseconds> retry_after(const HttpResponse& response) {
  const auto value = response.header("retry-after");
  if (!value) return std::nullopt;
  long long seconds = 0;
  const auto [end, error] = std::from_chars(value->data(), value->data() + value->size(), seconds);
  if (error != std::errc() || end != value->data() + value->size() || seconds < 0) {
    return std::nullopt;
  }
  return std::chrono::milliseconds(std::min<long long>(seconds, 86'400) * 1000);
}

bool retryable(long status) { return status == 429 || (status >= 500 && status <= 599); }

}  // namespace

Result<HubConfig> HubConfig::from_environment() {
  HubConfig config;
  if (auto endpoint = env("HF_ENDPOINT")) {
    while (!endpoint->empty() && endpoint->back() == '/') endpoint->pop_back();
    if (!endpoint->starts_with("http://") && !endpoint->starts_with("https://")) {
      return invalid_argument(fmt::format("HF_ENDPOINT={} is not an http:// or https:// URL",
                                          quote_for_message(*endpoint)));
    }
    config.endpoint = *endpoint;
  }
  config.token = env("HF_TOKEN");
  config.offline = env_is_true("HF_HUB_OFFLINE");
  return config;
}

std::string url_encode(std::string_view text, bool keep_slash) {
  std::string out;
  for (const unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' ||
        (keep_slash && c == '/')) {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

TransportOptions default_transport_options() {
  TransportOptions options;
  options.user_agent = fmt::format("canrun/{}", kCanrunVersion);
  return options;
}

HubClient::HubClient(HubConfig config, std::unique_ptr<HttpTransport> transport, Sleeper sleeper)
    : config_(std::move(config)), transport_(std::move(transport)), sleeper_(std::move(sleeper)) {
  if (!sleeper_)
    sleeper_ = [](std::chrono::milliseconds wait) { std::this_thread::sleep_for(wait); };
}

Result<HttpRequest> HubClient::make_request(
    std::string_view url_or_path, std::vector<std::pair<std::string, std::string>> headers) const {
  HttpRequest request;
  request.url = url_or_path.starts_with("http://") || url_or_path.starts_with("https://")
                    ? std::string(url_or_path)
                    : config_.endpoint + std::string(url_or_path);
  if (config_.offline) {
    return Error(ErrorCode::kUnavailable,
                 fmt::format("HF_HUB_OFFLINE is set: not fetching {}", request.url));
  }
  request.headers = std::move(headers);
  if (config_.token) request.headers.emplace_back("Authorization", "Bearer " + *config_.token);
  return request;
}

Result<HttpResponse> HubClient::get(std::string_view url_or_path,
                                    std::vector<std::pair<std::string, std::string>> headers) {
  CANRUN_ASSIGN_OR_RETURN(const HttpRequest request, make_request(url_or_path, std::move(headers)));
  return send_with_retries(
      request, [this](const HttpRequest& r) { return transport_->get(r); }, [] { return true; });
}

namespace {

//! Passes a 2xx answer's body on to the caller's sink and keeps other answers' bodies (error
//! pages) to itself, so that a retried 503 never lands in a file.
class SuccessOnlySink final : public BodySink {
 public:
  explicit SuccessOnlySink(BodySink& target) : target_(target) {}
  Status begin(const HttpResponse& head) override {
    passing_ = head.status >= 200 && head.status < 300;
    if (!passing_) return ok_status();
    target_began_ = true;
    return target_.begin(head);
  }
  Status write(std::string_view bytes) override {
    if (!passing_) return ok_status();
    return target_.write(bytes);
  }
  //! Whether the caller's sink has seen an answer: a retry would then repeat bytes.
  bool target_began() const { return target_began_; }

 private:
  BodySink& target_;
  bool passing_ = false;
  bool target_began_ = false;
};

}  // namespace

Result<HttpResponse> HubClient::get_streamed(
    std::string_view url_or_path, std::vector<std::pair<std::string, std::string>> headers,
    BodySink& sink) {
  CANRUN_ASSIGN_OR_RETURN(const HttpRequest request, make_request(url_or_path, std::move(headers)));
  SuccessOnlySink gate(sink);
  return send_with_retries(
      request, [&](const HttpRequest& r) { return transport_->get_streamed(r, gate); },
      [&] { return !gate.target_began(); });
}

Result<HttpResponse> HubClient::send_with_retries(const HttpRequest& request,
                                                  const Attempt& attempt,
                                                  const std::function<bool()>& may_retry) {
  std::chrono::milliseconds backoff = config_.backoff;
  int rate_limited = 0;
  std::string last_problem;
  for (int try_number = 1; try_number <= config_.max_attempts; ++try_number) {
    auto response = attempt(request);
    std::optional<std::chrono::milliseconds> wait;
    if (!response.ok()) {
      if (!may_retry()) return response.error();
      // Connection refused and timeouts are retried like 5xx; a redirect loop is not.
      if (response.error().code() != ErrorCode::kUnavailable &&
          response.error().code() != ErrorCode::kTimeout) {
        return response.error();
      }
      // A Hub that cannot be reached at all is tried twice, not max_attempts times: callers
      // fall back to what is on disk, and should not wait long for it.
      last_problem = response.error().message();
      if (try_number >= std::min(2, config_.max_attempts)) return response.error();
    } else {
      const long status = response->status;
      if ((status >= 200 && status < 300) || status == 304) return response;
      const std::string where = quote_for_message(request.url, 200);
      if (status == 401 || status == 403) {
        return invalid_argument(
                   fmt::format("GET {}: HTTP {}: the model is gated or private{}", where, status,
                               config_.token ? " and HF_TOKEN does not grant access"
                                             : "; set HF_TOKEN to a token with access"))
            .with_reason(reason::kGated);
      }
      if (status == 404) {
        return not_found(fmt::format("GET {}: HTTP 404: not on the Hub", where))
            .with_reason(reason::kNotFound);
      }
      if (!retryable(status)) {
        return Error(ErrorCode::kUnavailable, fmt::format("GET {}: HTTP {}", where, status));
      }
      rate_limited += status == 429;
      wait = retry_after(*response);
      last_problem = fmt::format("HTTP {}", status);
    }
    if (try_number == config_.max_attempts) break;
    const auto delay = std::min(wait.value_or(backoff), config_.max_wait);
    log::debug("GET {}: {}; retry {} of {} in {} ms", request.url, last_problem, try_number,
               config_.max_attempts - 1, delay.count());
    sleeper_(delay);
    backoff *= 2;
  }
  if (rate_limited == config_.max_attempts) {
    return Error(ErrorCode::kUnavailable,
                 fmt::format("GET {}: rate limited: HTTP 429 Too Many Requests on all {} "
                             "attempts; try again later",
                             quote_for_message(request.url, 200), config_.max_attempts));
  }
  return Error(ErrorCode::kUnavailable,
               fmt::format("GET {}: still failing after {} attempts ({} rate limited); last: {}",
                           quote_for_message(request.url, 200), config_.max_attempts, rate_limited,
                           last_problem));
}

Result<std::string> HubClient::get_text(std::string_view url_or_path) {
  CANRUN_ASSIGN_OR_RETURN(HttpResponse response, get(url_or_path));
  return std::move(response.body);
}

Result<HubClient::Slice> HubClient::get_range(std::string_view url, std::uint64_t offset,
                                              std::uint64_t length) {
  if (length == 0) return internal_error("get_range of 0 bytes");
  const std::string range = fmt::format("bytes={}-{}", offset, offset + length - 1);
  CANRUN_ASSIGN_OR_RETURN(HttpResponse response, get(url, {{"Range", range}}));
  const std::string where = quote_for_message(response.url, 200);
  if (response.status == 416) {
    return corrupt(
        fmt::format("GET {} ({}): range not satisfiable (file too short)", where, range));
  }
  if (response.status != 206) {
    return corrupt(
        fmt::format("GET {} ({}): HTTP {} instead of 206 Partial Content: the server "
                    "ignored the Range header",
                    where, range, response.status));
  }
  // Content-Range: bytes FIRST-LAST/TOTAL
  const auto content_range = response.header("content-range");
  std::uint64_t first = 0, last = 0, total = 0;
  if (!content_range ||
      std::sscanf(content_range->c_str(), "bytes %lu-%lu/%lu", &first, &last, &total) != 3 ||
      first != offset || last < first || last - first + 1 != response.body.size() ||
      last >= total) {
    return corrupt(fmt::format("GET {} ({}): Content-Range {} does not match the {} bytes sent",
                               where, range, quote_for_message(content_range.value_or("")),
                               response.body.size()));
  }
  return Slice{std::move(response.body), total};
}

}  // namespace canrun::hub
