// Boost.Beast implementation of HttpServer: one io_context per worker thread (no locks shared
// between workers, like nginx's worker processes), connections handed out round-robin by the
// acceptor, every read and write under a deadline. Beast parses requests; responses are written
// here: the head formatted directly (Beast's serializer was about a sixth of the server's time
// per small cached answer), the body from memory in the same write, or, for large bodies sent
// before (cached answers), with sendfile(2) from a file copy (body_files.h), as nginx sends a
// static file.
#include "serve/http_server.h"

#include <fmt/format.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sys/sendfile.h>
#include <sys/socket.h>

#include <array>
#include <atomic>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cerrno>
#include <csignal>
#include <optional>
#include <thread>

#include "core/json_output.h"
#include "core/log.h"
#include "serve/body_files.h"
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
  BodyFiles body_files;
};

//! Writes `response` (or only its head for HEAD) to the stream and calls `done(keep_alive)`.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(tcp::socket&& socket, std::shared_ptr<ServerState> state)
      : stream_(std::move(socket)),
        send_deadline_(stream_.get_executor()),
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

  //! The head of a response: status line, fields, the Connection field `keep_alive` needs
  //! with `version`, and Content-Length (for HEAD too: the length the body would have).
  static void write_head(std::string& head, const HttpResponse& response, unsigned version,
                         bool keep_alive, std::size_t length) {
    const auto reason = http::obsolete_reason(static_cast<http::status>(response.status));
    head.clear();
    auto out = std::back_inserter(head);
    fmt::format_to(out, "HTTP/{}.{} {} {}\r\nServer: canrun\r\nContent-Type: {}\r\n", version / 10,
                   version % 10, response.status, std::string_view(reason.data(), reason.size()),
                   response.content_type);
    for (const auto& [name, value] : response.headers)
      fmt::format_to(out, "{}: {}\r\n", name, value);
    if (version >= 11 && !keep_alive) head += "Connection: close\r\n";
    if (version < 11 && keep_alive) head += "Connection: keep-alive\r\n";
    fmt::format_to(out, "Content-Length: {}\r\n\r\n", length);
  }

  // The head is written here, the body straight from the response's shared buffer (a cached
  // answer is not copied), kept alive by body_ until the write is done. Large bodies sent
  // before go from their file copy instead (send_from_file).
  void send(HttpResponse response, const std::string& method, unsigned version, bool keep_alive) {
    body_ = response.body ? std::move(response.body) : std::make_shared<const std::string>();
    write_head(head_, response, version, keep_alive, body_->size());
    const bool head_only = method == "HEAD";
    if (!head_only) {
      if (auto file = state_->body_files.file_for(body_)) {
        body_.reset();
        send_from_file(std::move(file), keep_alive);
        return;
      }
    }
    const std::array<net::const_buffer, 2> buffers = {
        net::buffer(head_), head_only ? net::const_buffer() : net::buffer(*body_)};
    net::async_write(stream_, buffers,
                     [self = shared_from_this(), keep_alive](beast::error_code error, std::size_t) {
                       self->body_.reset();
                       self->after_write(error, keep_alive);
                     });
  }

  //! Sends head_, then the body from `file` with sendfile(2): the kernel takes the file's
  //! pages, the bytes are not copied out of the process. Corked like nginx's tcp_nopush, so the
  //! head leaves with the body's first bytes and the body in full segments (measured: a
  //! quarter less server time per request on a 350 KB answer). All of it within
  //! request_deadline of its first wait for room in the socket's buffer, or the connection is
  //! closed (a client that stops reading holds a socket, never a thread).
  void send_from_file(std::shared_ptr<const BodyFile> file, bool keep_alive) {
    file_send_ = {0, std::move(file), 0, keep_alive, false};
    if (!stream_.socket().native_non_blocking()) {  // asio's async reads have set it already
      beast::error_code error;
      stream_.socket().native_non_blocking(true, error);
      if (error) {
        finish_file_send(error);
        return;
      }
    }
    set_cork(true);
    continue_file_send();
  }

  void continue_file_send() {
    const int socket = stream_.socket().native_handle();
    FileSend& send = file_send_;
    while (send.head_sent < head_.size()) {
      const ssize_t sent = ::send(socket, head_.data() + send.head_sent,
                                  head_.size() - send.head_sent, MSG_NOSIGNAL);
      if (sent >= 0) {
        send.head_sent += static_cast<std::size_t>(sent);
      } else if (errno != EINTR) {
        file_send_failed(errno);
        return;
      }
    }
    while (send.body_sent < send.file->size()) {
      auto offset = static_cast<off_t>(send.body_sent);
      const ssize_t sent =
          ::sendfile(socket, send.file->fd(), &offset, send.file->size() - send.body_sent);
      if (sent > 0) {
        send.body_sent += static_cast<std::size_t>(sent);
      } else if (sent == 0) {
        file_send_failed(EIO);  // the file ended early: never written after creation, so never
        return;
      } else if (errno != EINTR) {
        file_send_failed(errno);
        return;
      }
    }
    finish_file_send({});
  }

  //! Waits for room in the socket's buffer when the send would block; else ends with `code`.
  //! Most sends fit the buffer at once and need neither the wait nor the deadline's timer.
  void file_send_failed(int code) {
    if (code == EAGAIN || code == EWOULDBLOCK) {
      if (!file_send_.waited) {
        file_send_.waited = true;
        send_deadline_.expires_after(state_->limits.request_deadline);
        send_deadline_.async_wait([self = shared_from_this()](beast::error_code error) {
          if (error) return;  // cancelled: the send finished in time
          beast::error_code ignored;
          self->stream_.socket().close(ignored);  // the pending wait ends with operation_aborted
        });
      }
      stream_.socket().async_wait(tcp::socket::wait_write,
                                  [self = shared_from_this()](beast::error_code error) {
                                    if (error) {
                                      self->finish_file_send(error);
                                    } else {
                                      self->continue_file_send();
                                    }
                                  });
      return;
    }
    finish_file_send(beast::error_code(code, boost::system::system_category()));
  }

  //! TCP_CORK: while on, only full segments leave; turning it off sends the rest.
  void set_cork(bool on) {
    const int value = on ? 1 : 0;
    ::setsockopt(stream_.socket().native_handle(), IPPROTO_TCP, TCP_CORK, &value, sizeof value);
  }

  void finish_file_send(beast::error_code error) {
    if (!error) set_cork(false);
    if (file_send_.waited) send_deadline_.cancel();
    const bool keep_alive = file_send_.keep_alive;
    file_send_ = {};
    after_write(error, keep_alive);
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

  //! A response being sent from a body file (send_from_file), its head in head_.
  struct FileSend {
    std::size_t head_sent = 0;
    std::shared_ptr<const BodyFile> file;
    std::size_t body_sent = 0;
    bool keep_alive = false;
    bool waited = false;  //!< the send has waited for room: send_deadline_ runs
  };

  beast::tcp_stream stream_;
  std::string head_;                         //!< the head being sent (its buffer reused)
  std::shared_ptr<const std::string> body_;  //!< the body being written from memory
  net::steady_timer send_deadline_;          //!< bounds a send from a body file
  FileSend file_send_;
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
      workers_.emplace_back([context = io_[idx].get()] {
        // sendfile(2) has no MSG_NOSIGNAL: a client gone mid-body must be an EPIPE here, not a
        // SIGPIPE that ends the process. The signal is the writing thread's, so blocking it
        // in the workers is enough.
        sigset_t pipe;
        sigemptyset(&pipe);
        sigaddset(&pipe, SIGPIPE);
        pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
        context->run();
      });
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
