#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "settle/async/asio.h"
#include "settle/core/clock.h"
#include "settle/core/status.h"
#include "settle/net/message.h"
#include "settle/net/request_reader.h"

namespace settle::net {

// A certificate chain and its private key, PEM files: what serves HTTPS. With `client_ca_file`
// the server also asks every client for a certificate (mutual TLS).
struct TlsFiles {
  std::string cert_file;
  std::string key_file;
  // PEM: the CA (or CAs) whose client certificates are accepted. When set, the server asks
  // every TLS client for a certificate and verifies it against these CAs: one from another
  // CA, expired or not yet valid fails the handshake, and nothing of that connection reaches
  // the handler. A client that presents none is let in (its Request::peer_subject is empty)
  // unless `require_client_certificate`. Expiry is judged by the system's clock, as OpenSSL
  // does, not by an injected Clock.
  std::string client_ca_file;
  // With client_ca_file: a connection without a certificate also fails the handshake.
  bool require_client_certificate = false;
  bool enabled() const { return !cert_file.empty(); }
};

// Whether a server with `tls` could serve: its certificate chain, its key (and that they go
// together) and its client CA file load as Server::Start loads them. Ok when TLS is off;
// InvalidArgument naming the file and what is wrong otherwise. For a check at start, before
// anything else is opened.
Status CheckTlsFiles(const TlsFiles& tls);

// Whether host:port can be listened on now: a socket is bound there as Server::Start binds
// one, and closed. Ok for port 0; Unavailable naming the address when another socket listens
// there or it is not an address of this host. Another process may still take the port before
// the server binds it, which Start then refuses the same way.
Status CheckListenable(const std::string& host, int port);

// A TLS handshake the server did not complete: who tried, and why it failed.
struct HandshakeFailure {
  std::string address;  // the peer's IP address
  int port = 0;         // and its port
  // OpenSSL's reason ("peer did not return a certificate", "http request", "certificate
  // verify failed: certificate has expired" with the verification's own reason), or what else
  // ended it ("timed out after 10000 ms", "connection closed by the client during the
  // handshake").
  std::string reason;
};

// What a server's head judge (ServerOptions::judge_head) says of a request whose head is in:
// nullopt lets its body be read and the handler answer it; an answer refuses it unread.
using HeadVerdict = std::optional<Response>;

struct ServerOptions {
  RequestLimits limits;
  // A connection idle this long between requests is closed.
  Duration keep_alive_timeout{5000};
  // A client that sends nothing for this long in the middle of a request gets a 408 and is
  // closed; an answer being written or a TLS handshake that stalls this long is given up on.
  Duration io_timeout{10000};
  // A whole request, from its first byte until its head and body are all in, within this: a
  // client that trickles (a byte now and then, each within io_timeout) gets a 408 once it
  // passes, however it spreads its bytes. Zero: no bound but io_timeout. Not the handler's
  // time: it starts when the request is whole.
  Duration request_timeout{10000};
  // A connection is closed after answering this many requests (its last answer says
  // "Connection: close"), so that clients spread over servers that come and go, as nginx's
  // keepalive_requests does. Zero: no limit.
  std::size_t max_requests_per_connection = 0;
  // Connections beyond this get a 503 answer and are closed at once.
  std::size_t max_connections = 10000;
  // Connections from one peer (an IPv4 address; an IPv6 address's /64, which one host
  // usually holds whole) beyond this get a 503 naming the cap and are closed at once, so that
  // one host's sockets cannot fill max_connections. Zero: no cap. Behind a proxy every client
  // is the proxy's address: raise it there (the proxy caps its own clients).
  std::size_t max_connections_per_peer = 0;
  // With a certificate, every connection is HTTPS.
  TlsFiles tls;
  // Called with each request's head (method, target, path, params, headers, the peer's
  // address and certificate subject; its body empty, not read yet) before its body is read
  // and before "100 Continue" is sent. An answer is sent at once with "Connection: close",
  // and the connection is closed: the body is drained for a moment (never kept) so that the
  // client reads the answer. Null: every head goes on. A head it lets through may carry what
  // the judge found (Request::head_judgement) to the handler with the whole request. Called on
  // an I/O thread: it must not block.
  std::function<HeadVerdict(Request& head)> judge_head;
  // The answer to a request refused before any handler sees it: `status` is 400, 413, 417,
  // 431 or 505 for its framing, 408 for a request not whole within request_timeout (or
  // stalled for io_timeout), 503 for a connection over max_connections or
  // max_connections_per_peer; `problem` names what is wrong, and the limit. By default that
  // status with {"message":"<problem>"}. Called on an I/O thread (also to count them).
  std::function<Response(int status, const std::string& problem)> refusal;
  // With TLS: called for each connection whose handshake fails (a certificate missing where
  // one is required, from another CA, expired; a client that does not trust the server's; a
  // client that is not speaking TLS; a handshake cut off or timed out). Not called for a
  // connection closed before it sent a byte (a TCP health check), nor for one Stop() ended.
  // Called on the connection's I/O thread: it must not block.
  std::function<void(const HandshakeFailure&)> on_handshake_failure;
};

// A handler answers one request. It runs as a coroutine on an I/O thread: it may co_await
// (a store's commit, branch calls, a pool's blocking work) but must never block. An
// exception it throws is answered with 500.
using Handler = std::function<asio::awaitable<Response>(Request&)>;

// An HTTP/1.1 server on Boost.Asio and Beast: one coroutine per connection, no thread per
// connection or request. Keep-alive with TCP_NODELAY, pipelined requests answered in order,
// "Expect: 100-continue", HTTP/1.0 closing, HTTPS with a certificate. Framing is strict (see
// RequestReader): a refused request gets one 4xx answer with "Connection: close", after which
// the server reads nothing more of the connection as a request: it stops sending, drains what
// the client still sends for a moment, and closes, so that the client reads the answer.
// Hostile clients are bounded: a request must be whole within request_timeout, a head is
// judged (judge_head) before its body is read, and one peer holds max_connections_per_peer
// connections at most.
//
// Thread-safety: Start and Stop from one thread that is not an I/O thread.
class Server {
 public:
  Server(asio::io_context& context, ServerOptions options, Handler handler);
  ~Server();  // Stop()
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Listens on host:port (port 0: any free one) and starts accepting. Returns the port;
  // InvalidArgument for an unusable certificate, key or client CA file (or a client CA file
  // without a certificate), Unavailable when it cannot listen.
  Result<int> Start(const std::string& host, int port);

  // Stops accepting, closes idle connections, lets requests in progress be answered (then
  // closes their connections) and waits until every connection has ended. Idempotent.
  void Stop();

  // Connections open now.
  std::size_t connections() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace settle::net
