// Boost.Beast implementation of HttpServer: one io_context per worker thread (no locks shared
// between workers, like nginx's worker processes), connections handed out round-robin by the
// acceptor, every read under a deadline.
#include "serve/http_server.h"

#include <fmt/format.h>

#include <atomic>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <optional>
#include <thread>

#include "core/json_output.h"
#include "core/log.h"
#include "serve/url.h"

namespace canrun::serve {

HttpResponse json_error(int status, const std::string& message,
                        const std::vector<std::string>& parameters) {
  nlohmann::json body = {{"error", message}};
  if (!parameters.empty()) body["parameters"] = parameters;
  HttpResponse response;
  response.status = status;
  response.body = std::make_shared<const std::string>(to_json_text(body, -1));
  return response;
}

namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

struct ServerState {
  ServerLimits limits;
  HttpHandler handler;
  std::atomic<std::size_t> open_connections{0};
  std::atomic<std::uint64_t> rejected{0};
};

//! Writes `response` (or only its head for HEAD) to the stream and calls `done(keep_alive)`.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(tcp::socket&& socket, std::shared_ptr<ServerState> state)
      : stream_(std::move(socket)),
        buffer_(state->limits.max_header_bytes + state->limits.max_body_bytes),
        state_(std::move(state)) {
    ++state_->open_connections;
  }
  ~Connection() { --state_->open_connections; }

  void start() {
    net::dispatch(stream_.get_executor(),
                  beast::bind_front_handler(&Connection::read_request, shared_from_this()));
  }

  //! Answers 503 to a connection over the cap, then closes it.
  void refuse() {
    ++state_->rejected;
    net::dispatch(stream_.get_executor(), [self = shared_from_this()] {
      self->send(json_error(503, "the server is at its connection limit; try again"), "GET", 11,
                 false);
    });
  }

 private:
  void read_request() {
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(state_->limits.max_header_bytes));
    parser_->body_limit(state_->limits.max_body_bytes);
    stream_.expires_after(state_->limits.request_deadline);
    http::async_read(stream_, buffer_, *parser_,
                     beast::bind_front_handler(&Connection::on_read, shared_from_this()));
  }

  void on_read(beast::error_code error, std::size_t) {
    if (error == http::error::end_of_stream || error == beast::error::timeout ||
        error == net::error::operation_aborted || error == net::error::connection_reset ||
        error == net::error::eof) {
      close();
      return;
    }
    if (error == http::error::header_limit) {
      ++state_->rejected;
      send(json_error(431, fmt::format("request header block is over {} bytes",
                                       state_->limits.max_header_bytes)),
           "GET", 11, false);
      return;
    }
    if (error == http::error::body_limit) {
      ++state_->rejected;
      send(json_error(413,
                      fmt::format("request body is over {} bytes", state_->limits.max_body_bytes)),
           "GET", 11, false);
      return;
    }
    if (error) {
      ++state_->rejected;
      send(json_error(400, fmt::format("malformed request: {}", error.message())), "GET", 11,
           false);
      return;
    }
    const auto& request = parser_->get();
    const bool keep_alive = request.keep_alive();
    const unsigned version = request.version();
    const std::string method(request.method_string());
    if (request.method() != http::verb::get && request.method() != http::verb::head) {
      ++state_->rejected;
      HttpResponse response =
          json_error(405, fmt::format("method {} is not allowed; use GET", quote_method(method)));
      response.headers.emplace_back("Allow", "GET, HEAD");
      send(std::move(response), method, version, /*keep_alive=*/false);
      return;
    }
    HttpRequest parsed;
    parsed.method = method;
    parsed.target = std::string(request.target());
    auto target = parse_target(parsed.target);
    if (!target.ok()) {
      ++state_->rejected;
      send(json_error(400, fmt::format("bad request target: {}", target.error().message())), method,
           version, keep_alive);
      return;
    }
    parsed.path = std::move(target->path);
    parsed.query = std::move(target->query);
    if (auto found = request.find(http::field::if_none_match); found != request.end()) {
      parsed.if_none_match = std::string(found->value());
    }
    if (auto found = request.find(http::field::accept_encoding); found != request.end()) {
      parsed.accepts_gzip = found->value().find("gzip") != beast::string_view::npos;
    }
    HttpResponse response;
    try {
      response = state_->handler(parsed);
    } catch (const std::exception& exception) {
      log::error("handler failed on {}: {}", parsed.target, exception.what());
      response = json_error(500, "internal error");
    }
    send(std::move(response), method, version, keep_alive);
  }

  static std::string quote_method(const std::string& method) {
    return nlohmann::json(method).dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
  }

  // The body is sent from the response's shared buffer (a cached answer is not copied): the
  // span points into `body`, which the write's handler keeps alive.
  using Message = http::response<http::span_body<const char>>;

  void send(HttpResponse response, const std::string& method, unsigned version, bool keep_alive) {
    auto body = response.body ? response.body : std::make_shared<const std::string>();
    auto message = std::make_shared<Message>(static_cast<http::status>(response.status), version);
    message->set(http::field::server, "canrun");
    message->set(http::field::content_type, response.content_type);
    for (auto& [name, value] : response.headers) message->set(name, value);
    message->keep_alive(keep_alive);
    message->content_length(body->size());
    if (method == "HEAD") {
      // Only the head, with the length the body would have.
      auto serializer =
          std::make_shared<http::response_serializer<http::span_body<const char>>>(*message);
      http::async_write_header(
          stream_, *serializer,
          [self = shared_from_this(), message, serializer, keep_alive](
              beast::error_code error, std::size_t) { self->after_write(error, keep_alive); });
      return;
    }
    message->body() = boost::beast::span<const char>(body->data(), body->size());
    http::async_write(
        stream_, *message,
        [self = shared_from_this(), message, body, keep_alive](
            beast::error_code error, std::size_t) { self->after_write(error, keep_alive); });
  }

  void after_write(beast::error_code error, bool keep_alive) {
    if (error || !keep_alive) {
      close();
      return;
    }
    read_request();
  }

  void close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.close();
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::shared_ptr<ServerState> state_;
  std::optional<http::request_parser<http::string_body>> parser_;
};

class BeastServer final : public HttpServer {
 public:
  BeastServer(const ServerLimits& limits, HttpHandler handler)
      : state_(std::make_shared<ServerState>()),
        io_(make_contexts(thread_count(limits))),
        acceptor_(*io_.front()) {
    state_->limits = limits;
    state_->handler = std::move(handler);
  }
  ~BeastServer() override { stop(); }

  Status listen(const std::string& host, std::uint16_t port) {
    beast::error_code error;
    const auto address = net::ip::make_address(host, error);
    if (error) {
      return invalid_argument(fmt::format("--host {} is not an IP address", host));
    }
    const tcp::endpoint endpoint(address, port);
    if (acceptor_.open(endpoint.protocol(), error); error) return bind_error(host, port, error);
    if (acceptor_.set_option(net::socket_base::reuse_address(true), error); error) {
      return bind_error(host, port, error);
    }
    if (acceptor_.bind(endpoint, error); error) return bind_error(host, port, error);
    if (acceptor_.listen(net::socket_base::max_listen_connections, error); error) {
      return bind_error(host, port, error);
    }
    port_ = acceptor_.local_endpoint().port();
    accept();
    const unsigned threads = thread_count(state_->limits);
    for (unsigned idx = 0; idx < threads; ++idx) {
      // A context with nothing to do yet must not return from run(): keep it busy until stop().
      keep_running_.push_back(net::make_work_guard(*io_[idx]));
      workers_.emplace_back([context = io_[idx].get()] { context->run(); });
    }
    return ok_status();
  }

  std::uint16_t port() const override { return port_; }
  std::size_t open_connections() const override { return state_->open_connections.load(); }
  std::uint64_t rejected_requests() const override { return state_->rejected.load(); }

  void stop() override {
    if (stopped_.exchange(true)) return;
    net::post(acceptor_.get_executor(), [this] {
      beast::error_code ignored;
      acceptor_.close(ignored);
    });
    keep_running_.clear();
    for (auto& context : io_) context->stop();
    for (auto& worker : workers_) {
      if (worker.joinable()) worker.join();
    }
  }

 private:
  static unsigned thread_count(const ServerLimits& limits) {
    return limits.threads ? limits.threads : std::max(1u, std::thread::hardware_concurrency());
  }

  static std::vector<std::unique_ptr<net::io_context>> make_contexts(unsigned count) {
    std::vector<std::unique_ptr<net::io_context>> contexts;
    for (unsigned idx = 0; idx < count; ++idx) {
      contexts.push_back(std::make_unique<net::io_context>(1));
    }
    return contexts;
  }

  static Error bind_error(const std::string& host, std::uint16_t port,
                          const beast::error_code& error) {
    return io_error(fmt::format("cannot listen on {}:{}: {}", host, port, error.message()));
  }

  void accept() {
    acceptor_.async_accept(
        io_[next_context_++ % io_.size()]->get_executor(),
        [this](beast::error_code error, tcp::socket socket) {
          if (error == net::error::operation_aborted || !acceptor_.is_open()) return;
          if (!error) {
            beast::error_code ignored;
            socket.set_option(tcp::no_delay(true), ignored);
            auto connection = std::make_shared<Connection>(std::move(socket), state_);
            if (state_->open_connections.load() > state_->limits.max_connections) {
              connection->refuse();
            } else {
              connection->start();
            }
          } else if (error == net::error::no_descriptors) {
            log::warning("out of file descriptors; refusing connections for a moment");
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
          }
          accept();
        });
  }

  std::shared_ptr<ServerState> state_;
  std::vector<std::unique_ptr<net::io_context>> io_;  //!< one per worker thread
  std::size_t next_context_ = 0;                      //!< only touched by the acceptor
  std::vector<net::executor_work_guard<net::io_context::executor_type>> keep_running_;
  tcp::acceptor acceptor_;
  std::vector<std::thread> workers_;
  std::uint16_t port_ = 0;
  std::atomic<bool> stopped_{false};
};

}  // namespace

Result<std::unique_ptr<HttpServer>> HttpServer::start(const std::string& host, std::uint16_t port,
                                                      const ServerLimits& limits,
                                                      HttpHandler handler) {
  auto server = std::make_unique<BeastServer>(limits, std::move(handler));
  CANRUN_RETURN_IF_ERROR(server->listen(host, port));
  return std::unique_ptr<HttpServer>(std::move(server));
}

}  // namespace canrun::serve
