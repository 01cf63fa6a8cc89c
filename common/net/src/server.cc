#include "settle/net/server.h"

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>

#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <unordered_set>

#include "settle/net/certificate_subject.h"
#include "stream.h"
#include "wire.h"

namespace settle::net {
namespace {

constexpr std::size_t kReadChunk = 16 * 1024;
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

}  // namespace

// One accepted connection, as Stop() sees it. Its fields are touched only on its strand.
struct Connection {
  explicit Connection(asio::strand<asio::io_context::executor_type> s) : strand(std::move(s)) {}
  asio::strand<asio::io_context::executor_type> strand;
  beast::tcp_stream* stream = nullptr;  // while the session runs
  bool idle = false;                    // waiting for the first byte of a next request
  bool stopping = false;
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
  asio::awaitable<void> RefuseOverLimit(tcp::socket socket);

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
  std::size_t running = 0;  // the accept loop and sessions; guarded by mu
  bool stopping = false;    // guarded by mu
};

bool Server::Impl::Enter(const std::shared_ptr<Connection>& connection) {
  std::lock_guard lock(mu);
  if (stopping && connection != nullptr) return false;
  ++running;
  if (connection != nullptr) connections.insert(connection);
  return true;
}

void Server::Impl::Leave(const std::shared_ptr<Connection>& connection) {
  std::lock_guard lock(mu);
  --running;
  if (connection != nullptr) connections.erase(connection);
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
    bool over_limit = false;
    {
      std::lock_guard lock(mu);
      over_limit = connections.size() >= options.max_connections;
    }
    if (over_limit) {
      Enter(nullptr);
      asio::co_spawn(strand, RefuseOverLimit(std::move(socket)),
                     [self = shared_from_this()](std::exception_ptr) { self->Leave(nullptr); });
      continue;
    }
    auto connection = std::make_shared<Connection>(strand);
    if (!Enter(connection)) break;
    asio::co_spawn(
        strand, Run(std::move(socket), connection),
        [self = shared_from_this(), connection](std::exception_ptr) { self->Leave(connection); });
  }
  Leave(nullptr);
}

asio::awaitable<void> Server::Impl::RefuseOverLimit(tcp::socket socket) {
  PlainStream stream(std::move(socket));
  const Response refusal{
      503, "application/json",
      MessageBody("too many connections (" + std::to_string(options.max_connections) +
                  " open); try again later")};
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
  RequestReader reader(options.limits);
  auto& tcp_stream = beast::get_lowest_layer(stream);
  beast::error_code ec;
  for (;;) {
    RequestReader::Step step = reader.Parse();
    while (step == RequestReader::Step::kNeedMore || step == RequestReader::Step::kExpectContinue) {
      if (step == RequestReader::Step::kExpectContinue) {
        tcp_stream.expires_after(options.io_timeout);
        co_await asio::async_write(stream, asio::buffer(kContinue),
                                   asio::redirect_error(asio::use_awaitable, ec));
        if (ec) co_return;
      } else {
        connection.idle = !reader.mid_request();
        if (connection.idle && connection.stopping) co_return;
        tcp_stream.expires_after(connection.idle ? options.keep_alive_timeout : options.io_timeout);
        std::span<char> room = reader.Prepare(kReadChunk);
        const std::size_t n = co_await stream.async_read_some(
            asio::buffer(room.data(), room.size()), asio::redirect_error(asio::use_awaitable, ec));
        reader.Commit(n);
        connection.idle = false;
        if (ec) co_return;  // closed, reset, timed out, or cancelled by Stop()
      }
      step = reader.Parse();
    }
    if (step == RequestReader::Step::kRefused) {
      const Response refusal = options.refusal(reader.refusal_status(), reader.refusal());
      if (co_await Write(stream, refusal, /*close=*/true, false, false)) {
        co_await CloseGracefully(stream, kCloseGrace);
      }
      co_return;
    }
    Request request = reader.TakeRequest();
    request.remote_address = address;
    request.remote_port = port;
    request.peer_subject = peer_subject;
    Response response;
    try {
      response = co_await handler(request);
    } catch (const std::exception& e) {
      response = Response{500, "application/json",
                          MessageBody(std::string("internal error: ") + e.what())};
    } catch (...) {
      response = Response{500, "application/json", MessageBody("internal error")};
    }
    const bool close = !reader.keep_alive() || connection.stopping;
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
  beast::error_code ec;
  tcp::resolver resolver(impl.context);
  const auto endpoints = resolver.resolve(
      host, std::to_string(port), tcp::resolver::passive | tcp::resolver::numeric_service, ec);
  if (ec || endpoints.empty()) {
    return Status::InvalidArgument("cannot resolve '" + host + "': " + ec.message());
  }
  std::string error;
  for (const auto& entry : endpoints) {
    const tcp::endpoint endpoint = entry.endpoint();
    impl.acceptor.open(endpoint.protocol(), ec);
    if (!ec) impl.acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) impl.acceptor.bind(endpoint, ec);
    if (!ec) impl.acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (!ec) break;
    error = ec.message();
    beast::error_code ignored;
    impl.acceptor.close(ignored);
  }
  if (!impl.acceptor.is_open()) {
    return Status::Unavailable("cannot listen on " + host + ":" + std::to_string(port) + ": " +
                               error);
  }
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
