#include "settle/net/server.h"

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "settle/net/certificate_subject.h"
#include "stream.h"
#include "wire.h"

namespace settle::net {
namespace {

constexpr std::size_t kReadChunk = 16 * 1024;
// Connections refused for a cap that are still being answered (each holds a descriptor while
// its 503 is written and the client's bytes are drained); beyond this, closed unanswered, so
// that a flood of refused connections cannot itself fill the descriptors.
constexpr std::size_t kMaxRefusing = 256;
// How long a closing connection waits for the client to read the last answer and close.
constexpr Duration kCloseGrace{2000};
constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";

Response DefaultRefusal(int status, const std::string& problem) {
  return Response{status, "application/json", MessageBody(problem)};
}

// Why a server's TLS handshake failed, for ServerOptions::on_handshake_failure; nullopt when
// it is not a failure to report: Stop() cancelled it, or the client closed the connection
// before sending a byte (a TCP health check).
std::optional<std::string> HandshakeFailureReason(const beast::error_code& ec, SSL* ssl,
                                                  Duration timeout) {
  if (ec == asio::error::operation_aborted) return std::nullopt;
  const bool closed = ec == asio::error::eof || ec == asio::ssl::error::stream_truncated ||
                      ec == asio::error::connection_reset;
  // The bytes OpenSSL read of the connection: none from a probe that only connected.
  if (closed && BIO_number_read(SSL_get_rbio(ssl)) == 0) return std::nullopt;
  if (ec == beast::error::timeout) {
    return "timed out after " + std::to_string(timeout.count()) + " ms";
  }
  if (closed) return std::string("connection closed by the client during the handshake");
  std::string reason = ec.message();  // OpenSSL's reason
  const long verified = SSL_get_verify_result(ssl);
  if (verified != X509_V_OK) reason += ": " + std::string(X509_verify_cert_error_string(verified));
  return reason;
}

// The key one peer's connections are counted under: an IPv4 address (also written as an
// IPv4-mapped IPv6 one), or an IPv6 address's first 64 bits (one host usually holds a whole
// /64, and could take as many addresses of it as it likes).
std::string PeerKey(const asio::ip::address& address) {
  if (!address.is_v6()) return address.to_string();
  const asio::ip::address_v6 v6 = address.to_v6();
  if (v6.is_v4_mapped()) return asio::ip::make_address_v4(asio::ip::v4_mapped, v6).to_string();
  asio::ip::address_v6::bytes_type bytes = v6.to_bytes();
  std::fill(bytes.begin() + 8, bytes.end(), 0);
  return asio::ip::address_v6(bytes).to_string() + "/64";
}

// Bounds one read of a request by a deadline without closing the connection when it passes
// (as the stream's own timeout does): the read is cancelled, so that the server can still
// answer 408. Its handler runs on the connection's strand, as the session does; a handler
// that comes after the read it watched ended (its generation passed) does nothing.
struct ReadWatch : std::enable_shared_from_this<ReadWatch> {
  explicit ReadWatch(beast::tcp_stream& s) : stream(&s), timer(s.get_executor()) {}

  void Arm(std::chrono::steady_clock::time_point deadline) {
    expired = false;
    ++generation;
    timer.expires_at(deadline);
    timer.async_wait([self = shared_from_this(), armed = generation](const beast::error_code& ec) {
      if (ec || armed != self->generation || self->stream == nullptr) return;
      self->expired = true;
      self->stream->cancel();
    });
  }
  void Disarm() {
    ++generation;
    timer.cancel();
  }
  // When the session ends: nothing of it is touched afterwards.
  void End() {
    stream = nullptr;
    Disarm();
  }

  beast::tcp_stream* stream;  // null once the session ended
  asio::steady_timer timer;
  std::uint64_t generation = 0;
  bool expired = false;  // the last armed deadline passed and cancelled the read
};

// Ends a ReadWatch with the session, whichever way it returns.
struct EndWatch {
  ~EndWatch() { watch->End(); }
  std::shared_ptr<ReadWatch> watch;
};

std::string Milliseconds(Duration d) { return std::to_string(d.count()) + " ms"; }

}  // namespace

// One accepted connection, as Stop() sees it. Its fields are touched only on its strand.
struct Connection {
  explicit Connection(asio::strand<asio::io_context::executor_type> s) : strand(std::move(s)) {}
  asio::strand<asio::io_context::executor_type> strand;
  beast::tcp_stream* stream = nullptr;  // while the session runs
  bool idle = false;                    // waiting for the first byte of a next request
  bool stopping = false;
  std::string peer;  // PeerKey of its address; set before the session starts
};

struct Server::Impl : std::enable_shared_from_this<Server::Impl> {
  Impl(asio::io_context& c, ServerOptions o, Handler h)
      : context(c), options(std::move(o)), handler(std::move(h)), acceptor(asio::make_strand(c)) {
    if (!options.refusal) options.refusal = DefaultRefusal;
  }

  asio::awaitable<void> Accept();
  asio::awaitable<void> Run(tcp::socket socket, std::shared_ptr<Connection> connection);
  template <class Stream>
  asio::awaitable<void> Serve(Stream& stream, Connection& connection, const std::string& address,
                              int port, const std::string& peer_subject);
  template <class Stream>
  asio::awaitable<bool> Write(Stream& stream, const Response& response, bool close,
                              bool keep_alive_header, bool head_only);
  asio::awaitable<void> RefuseOverLimit(tcp::socket socket, std::string problem);
  // Why a new connection from `peer` is over a cap (the 503's problem); nullopt when it may be
  // served. Under mu.
  std::optional<std::string> OverLimit(const std::string& peer, const tcp::endpoint& endpoint);

  // Counts a coroutine that Stop() must wait for; false once stopping.
  bool Enter(const std::shared_ptr<Connection>& connection);
  void Leave(const std::shared_ptr<Connection>& connection);

  asio::io_context& context;
  ServerOptions options;
  Handler handler;
  std::unique_ptr<asio::ssl::context> tls;
  tcp::acceptor acceptor;

  mutable std::mutex mu;
  std::condition_variable ended;
  std::unordered_set<std::shared_ptr<Connection>> connections;  // guarded by mu
  std::unordered_map<std::string, std::size_t> per_peer;        // open connections; guarded by mu
  std::size_t running = 0;   // the accept loop and sessions; guarded by mu
  std::size_t refusing = 0;  // RefuseOverLimit coroutines; guarded by mu
  bool stopping = false;     // guarded by mu
};

bool Server::Impl::Enter(const std::shared_ptr<Connection>& connection) {
  std::lock_guard lock(mu);
  if (stopping && connection != nullptr) return false;
  ++running;
  if (connection != nullptr) {
    connections.insert(connection);
    ++per_peer[connection->peer];
  }
  return true;
}

void Server::Impl::Leave(const std::shared_ptr<Connection>& connection) {
  std::lock_guard lock(mu);
  --running;
  if (connection != nullptr && connections.erase(connection) > 0) {
    const auto it = per_peer.find(connection->peer);
    if (it != per_peer.end() && --it->second == 0) per_peer.erase(it);
  }
  ended.notify_all();
}

asio::awaitable<void> Server::Impl::Accept() {
  for (;;) {
    auto strand = asio::make_strand(context);
    tcp::socket socket(strand);
    beast::error_code ec;
    co_await acceptor.async_accept(socket, asio::redirect_error(asio::use_awaitable, ec));
    {
      std::lock_guard lock(mu);
      if (stopping) break;
    }
    if (ec == asio::error::operation_aborted) break;
    if (ec) {
      // Out of descriptors or memory: the connection stays queued; pause before trying again
      // rather than spinning.
      asio::steady_timer pause(acceptor.get_executor(), std::chrono::milliseconds(10));
      co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      continue;
    }
    socket.set_option(tcp::no_delay(true), ec);
    const tcp::endpoint endpoint = socket.remote_endpoint(ec);
    auto connection = std::make_shared<Connection>(strand);
    connection->peer = ec ? std::string() : PeerKey(endpoint.address());
    std::optional<std::string> over_limit;
    bool answer_refusal = true;
    {
      std::lock_guard lock(mu);
      over_limit = OverLimit(connection->peer, endpoint);
      if (over_limit) {
        answer_refusal = refusing < kMaxRefusing;
        if (answer_refusal) ++refusing;
      }
    }
    if (over_limit) {
      if (!answer_refusal) {
        options.refusal(503, *over_limit);  // counted; no descriptor spent on answering it
        socket.close(ec);
        continue;
      }
      Enter(nullptr);
      asio::co_spawn(strand, RefuseOverLimit(std::move(socket), std::move(*over_limit)),
                     [self = shared_from_this()](std::exception_ptr) {
                       {
                         std::lock_guard lock(self->mu);
                         --self->refusing;
                       }
                       self->Leave(nullptr);
                     });
      continue;
    }
    if (!Enter(connection)) break;
    asio::co_spawn(
        strand, Run(std::move(socket), connection),
        [self = shared_from_this(), connection](std::exception_ptr) { self->Leave(connection); });
  }
  Leave(nullptr);
}

std::optional<std::string> Server::Impl::OverLimit(const std::string& peer,
                                                   const tcp::endpoint& endpoint) {
  if (connections.size() >= options.max_connections) {
    return "too many connections (" + std::to_string(options.max_connections) +
           " open, the server's cap); try again later";
  }
  if (options.max_connections_per_peer == 0) return std::nullopt;
  const auto it = per_peer.find(peer);
  if (it == per_peer.end() || it->second < options.max_connections_per_peer) return std::nullopt;
  return "too many connections from " + endpoint.address().to_string() + " (" +
         std::to_string(options.max_connections_per_peer) +
         " open, the cap per peer address); try again later";
}

asio::awaitable<void> Server::Impl::RefuseOverLimit(tcp::socket socket, std::string problem) {
  PlainStream stream(std::move(socket));
  const Response refusal = options.refusal(503, problem);
  if (co_await Write(stream, refusal, /*close=*/true, false, false)) {
    co_await CloseGracefully(stream, kCloseGrace);
  }
}

asio::awaitable<void> Server::Impl::Run(tcp::socket socket,
                                        std::shared_ptr<Connection> connection) {
  beast::error_code ec;
  const tcp::endpoint peer = socket.remote_endpoint(ec);
  const std::string address = ec ? std::string() : peer.address().to_string();
  const int port = ec ? 0 : peer.port();
  if (tls == nullptr) {
    PlainStream stream(std::move(socket));
    connection->stream = &stream;
    co_await Serve(stream, *connection, address, port, std::string());
    connection->stream = nullptr;
    co_return;
  }
  TlsStream stream(std::move(socket), *tls);
  connection->stream = &beast::get_lowest_layer(stream);
  beast::get_lowest_layer(stream).expires_after(options.io_timeout);
  co_await stream.async_handshake(asio::ssl::stream_base::server,
                                  asio::redirect_error(asio::use_awaitable, ec));
  // A certificate from another CA, expired, or missing where one is required has failed the
  // handshake already: OpenSSL verified the chain against the client CA file.
  if (ec && options.on_handshake_failure) {
    if (std::optional<std::string> reason =
            HandshakeFailureReason(ec, stream.native_handle(), options.io_timeout)) {
      options.on_handshake_failure(HandshakeFailure{address, port, std::move(*reason)});
    }
  }
  if (!ec) {
    X509* peer = SSL_get_peer_certificate(stream.native_handle());
    const std::string peer_subject = CertificateSubject(peer);
    X509_free(peer);
    co_await Serve(stream, *connection, address, port, peer_subject);
  }
  connection->stream = nullptr;
}

template <class Stream>
asio::awaitable<bool> Server::Impl::Write(Stream& stream, const Response& response, bool close,
                                          bool keep_alive_header, bool head_only) {
  const std::string head = ResponseHead(response, close, keep_alive_header);
  const std::string_view body = head_only ? std::string_view() : std::string_view(response.body);
  beast::get_lowest_layer(stream).expires_after(options.io_timeout);
  const beast::error_code ec = co_await WriteMessage(stream, head, body);
  co_return !ec;
}

template <class Stream>
asio::awaitable<void> Server::Impl::Serve(Stream& stream, Connection& connection,
                                          const std::string& address, int port,
                                          const std::string& peer_subject) {
  using SteadyClock = std::chrono::steady_clock;
  RequestReader reader(options.limits, /*report_heads=*/true);
  auto& tcp_stream = beast::get_lowest_layer(stream);
  const EndWatch end_watch{std::make_shared<ReadWatch>(tcp_stream)};
  ReadWatch& watch = *end_watch.watch;
  beast::error_code ec;
  // Answers a request refused before its handler, closing the connection after it.
  auto refuse = [&](const Response& refusal, bool head_only) -> asio::awaitable<void> {
    if (co_await Write(stream, refusal, /*close=*/true, false, head_only)) {
      co_await CloseGracefully(stream, kCloseGrace);
    }
  };
  std::size_t answered = 0;
  for (;;) {
    // Set once the request's first byte is in: its head and body must be in by then.
    std::optional<SteadyClock::time_point> deadline;
    RequestReader::Step step = reader.Parse();
    while (step != RequestReader::Step::kRequest && step != RequestReader::Step::kRefused) {
      if (step == RequestReader::Step::kHead) {
        Request& head = reader.head();
        head.remote_address = address;
        head.remote_port = port;
        head.peer_subject = peer_subject;
        if (options.judge_head) {
          HeadVerdict verdict;
          try {
            verdict = options.judge_head(head);
          } catch (const std::exception& e) {
            verdict = Response{500, "application/json",
                               MessageBody(std::string("internal error: ") + e.what())};
          }
          if (verdict) {
            co_await refuse(*verdict, head.method == "HEAD");
            co_return;
          }
        }
      } else if (step == RequestReader::Step::kExpectContinue) {
        tcp_stream.expires_after(options.io_timeout);
        co_await asio::async_write(stream, asio::buffer(kContinue),
                                   asio::redirect_error(asio::use_awaitable, ec));
        if (ec) co_return;
      } else {
        // Idle until the first byte of a request, empty lines before it included (RFC 9112
        // lets them be ignored, not repeated for ever under the keep-alive timeout).
        connection.idle = !reader.mid_request() && !deadline;
        if (connection.idle && connection.stopping) co_return;
        std::span<char> room = reader.Prepare(kReadChunk);
        std::size_t n = 0;
        if (connection.idle) {
          tcp_stream.expires_after(options.keep_alive_timeout);
          n = co_await stream.async_read_some(asio::buffer(room.data(), room.size()),
                                              asio::redirect_error(asio::use_awaitable, ec));
        } else {
          // In the middle of a request: bounded by the whole request's deadline and by a stall
          // of io_timeout, each answered with 408 rather than a silent close.
          const SteadyClock::time_point now = SteadyClock::now();
          if (!deadline && options.request_timeout.count() > 0) {
            deadline = now + options.request_timeout;
          }
          const SteadyClock::time_point stall = now + options.io_timeout;
          const bool whole = deadline && *deadline <= stall;
          if (whole && *deadline <= now) {
            reader.Commit(0);
            co_await refuse(options.refusal(408, "request: not received whole within " +
                                                     Milliseconds(options.request_timeout) +
                                                     " (the request timeout)"),
                            false);
            co_return;
          }
          tcp_stream.expires_never();
          watch.Arm(whole ? *deadline : stall);
          n = co_await stream.async_read_some(asio::buffer(room.data(), room.size()),
                                              asio::redirect_error(asio::use_awaitable, ec));
          const bool expired = watch.expired;
          watch.Disarm();
          if (ec && expired) {
            reader.Commit(0);
            const std::string problem =
                whole ? "request: not received whole within " +
                            Milliseconds(options.request_timeout) + " (the request timeout)"
                      : "request: nothing received for " + Milliseconds(options.io_timeout) +
                            " in the middle of it (the I/O timeout)";
            co_await refuse(options.refusal(408, problem), false);
            co_return;
          }
        }
        reader.Commit(n);
        connection.idle = false;
        if (ec) co_return;  // closed, reset, timed out idle, or cancelled by Stop()
        if (!deadline && options.request_timeout.count() > 0) {
          deadline = SteadyClock::now() + options.request_timeout;  // its first bytes came
        }
      }
      step = reader.Parse();
    }
    if (step == RequestReader::Step::kRefused) {
      co_await refuse(options.refusal(reader.refusal_status(), reader.refusal()), false);
      co_return;
    }
    Request request = reader.TakeRequest();
    Response response;
    try {
      response = co_await handler(request);
    } catch (const std::exception& e) {
      response = Response{500, "application/json",
                          MessageBody(std::string("internal error: ") + e.what())};
    } catch (...) {
      response = Response{500, "application/json", MessageBody("internal error")};
    }
    ++answered;
    const bool close = !reader.keep_alive() || connection.stopping ||
                       (options.max_requests_per_connection != 0 &&
                        answered >= options.max_requests_per_connection);
    const bool keep_alive_header = !close && reader.version() == 10;
    if (!co_await Write(stream, response, close, keep_alive_header, request.method == "HEAD")) {
      co_return;
    }
    if (close) {
      co_await CloseGracefully(stream, kCloseGrace);
      co_return;
    }
  }
}

Server::Server(asio::io_context& context, ServerOptions options, Handler handler)
    : impl_(std::make_shared<Impl>(context, std::move(options), std::move(handler))) {}

Server::~Server() { Stop(); }

namespace {

// Opens `acceptor` listening on the first address of `host` that binds at `port`.
Status Listen(asio::io_context& context, tcp::acceptor& acceptor, const std::string& host,
              int port) {
  beast::error_code ec;
  tcp::resolver resolver(context);
  const auto endpoints = resolver.resolve(
      host, std::to_string(port), tcp::resolver::passive | tcp::resolver::numeric_service, ec);
  if (ec || endpoints.empty()) {
    return Status::InvalidArgument("cannot resolve '" + host + "': " + ec.message());
  }
  std::string error;
  for (const auto& entry : endpoints) {
    const tcp::endpoint endpoint = entry.endpoint();
    acceptor.open(endpoint.protocol(), ec);
    if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) acceptor.bind(endpoint, ec);
    if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (!ec) return Status::Ok();
    error = ec.message();
    beast::error_code ignored;
    acceptor.close(ignored);
  }
  return Status::Unavailable("cannot listen on " + host + ":" + std::to_string(port) + ": " +
                             error);
}

}  // namespace

Status CheckListenable(const std::string& host, int port) {
  if (port == 0) return Status::Ok();
  asio::io_context context;
  tcp::acceptor acceptor(context);
  return Listen(context, acceptor, host, port);
}

Status CheckTlsFiles(const TlsFiles& tls) {
  if (!tls.enabled()) return Status::Ok();
  auto context = ServerTlsContext(tls);
  return context ? Status::Ok() : context.status();
}

Result<int> Server::Start(const std::string& host, int port) {
  Impl& impl = *impl_;
  if (!impl.options.tls.enabled() && !impl.options.tls.client_ca_file.empty()) {
    // Plain HTTP would let every client in: refuse rather than look protected.
    return Status::InvalidArgument("client CA file '" + impl.options.tls.client_ca_file +
                                   "' given without a certificate to serve HTTPS with");
  }
  if (impl.options.tls.enabled()) {
    auto tls = ServerTlsContext(impl.options.tls);
    if (!tls) return tls.status();
    impl.tls = std::move(*tls);
  }
  if (Status s = Listen(impl.context, impl.acceptor, host, port); !s.ok()) return s;
  beast::error_code ec;
  const int bound = impl.acceptor.local_endpoint(ec).port();
  impl.Enter(nullptr);
  asio::co_spawn(impl.acceptor.get_executor(), impl.Accept(), asio::detached);
  return bound;
}

void Server::Stop() {
  Impl& impl = *impl_;
  std::vector<std::shared_ptr<Connection>> open;
  {
    std::lock_guard lock(impl.mu);
    if (impl.stopping) return;
    impl.stopping = true;
    open.assign(impl.connections.begin(), impl.connections.end());
  }
  asio::post(impl.acceptor.get_executor(), [self = impl_] {
    beast::error_code ignored;
    self->acceptor.close(ignored);
  });
  for (const std::shared_ptr<Connection>& connection : open) {
    asio::post(connection->strand, [connection] {
      connection->stopping = true;
      // An idle connection is closed now; one in the middle of a request is answered first.
      if (connection->idle && connection->stream != nullptr) connection->stream->cancel();
    });
  }
  std::unique_lock lock(impl.mu);
  impl.ended.wait(lock, [&impl] { return impl.running == 0; });
}

std::size_t Server::connections() const {
  std::lock_guard lock(impl_->mu);
  return impl_->connections.size();
}

}  // namespace settle::net
