#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "settle/async/asio.h"
#include "settle/core/clock.h"
#include "settle/core/status.h"
#include "settle/core/url.h"
#include "settle/net/cancellation.h"
#include "settle/net/message.h"

namespace settle::net {

struct ClientOptions {
  // Idle keep-alive connections kept per origin (scheme, host, port).
  std::size_t max_idle_per_host = 64;
  // Idle keep-alive connections kept in all, whatever the number of origins (a transaction may
  // name a thousand participant hosts): past it, the stale ones are closed and, if none is,
  // a connection that ends its request is closed instead of kept.
  std::size_t max_idle_total = 1024;
  // An idle connection older than this is closed rather than reused: servers close theirs
  // after a few seconds, and one closed just as it is reused costs a retry.
  Duration max_idle_time{4000};
  // Peers of https:// URLs are verified against this CA file (PEM); empty: the system's CA
  // store. Verification covers the chain and the URL's host name (or IP address).
  std::string ca_file;
  // A certificate chain and its private key (PEM) presented to https:// servers that ask for
  // a client certificate (mutual TLS); empty: none is presented. Both or neither.
  std::string client_cert_file;
  std::string client_key_file;
  // Judges idle connections' age (max_idle_time) by its monotonic reading; null: a
  // SystemClock. Must outlive the client. Requests' timeouts are OS timers on the real steady
  // clock whatever this is.
  const Clock* clock = nullptr;
};

struct ClientRequest {
  std::string method = "GET";
  Url url;
  // Path and query as sent; empty: url.path_and_query. Non-ASCII bytes are percent-encoded.
  std::string target;
  Headers headers;  // see RequestHead: Host and Content-Type are added unless given
  std::string body;
  // The whole exchange: resolving, connecting, the TLS handshake, sending and reading.
  Duration timeout{10000};
  // Whether the request may be sent again on a fresh connection when a kept-alive one turns
  // out to have been closed by the server before any byte of an answer came back (the server
  // may have received it the first time).
  bool idempotent = true;
  // Of the answer's body, only this much is kept; the rest is read and dropped.
  std::size_t max_answer_bytes = 16 << 20;
  // Ends the request before its timeout when cancelled (see Cancellation); null: only the
  // timeout does.
  std::shared_ptr<Cancellation> cancellation;
};

struct ClientAnswer {
  int status = 0;
  std::string body;  // its first max_answer_bytes
  std::uint64_t body_bytes = 0;
  Headers headers;
};

// An HTTP/1.1 client on Boost.Asio and Beast, asynchronous: a call holds no thread while it
// waits. Keep-alive connections are pooled per origin (with TCP_NODELAY), https:// URLs go
// over TLS (OpenSSL, SNI, the peer verified). A host that resolves to several addresses
// (localhost: ::1 and 127.0.0.1) is tried address by address.
//
// Errors, each naming host:port and why: InvalidArgument when the request cannot be sent as
// given (a header with CR or LF); Unavailable when it never reached the server ("cannot
// resolve host 'x'", "connection refused or unreachable: h:p", "timed out after N ms
// connecting to h:p", "TLS handshake with h:p failed: ...", which is also how a server's
// refusal of the client certificate reads, though TLS 1.3 sends it after the client's
// handshake has ended: the server read no request); Pending when it was sent but no
// complete answer came, so the server may have acted on it ("timed out after N ms waiting for
// h:p", "connection closed by h:p before a complete answer", "malformed answer from h:p:
// ..."). Any answer, whatever its status, is a value. A request whose cancellation was
// cancelled is Unavailable ("cancelled before anything was sent to h:p") or Pending ("cancelled
// while waiting for h:p"), unless its whole answer had come.
//
// Thread-safety: Send may be called from any coroutine, concurrently. Called on a strand, it
// runs there; elsewhere it runs on a strand of its own and resumes the caller when done.
class Client {
 public:
  // InvalidArgument, naming the file, when the CA file or the client certificate or key cannot
  // be used, or the key does not match the certificate.
  static Result<std::unique_ptr<Client>> Create(ClientOptions options = {});
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  asio::awaitable<Result<ClientAnswer>> Send(ClientRequest request);

  // Closes every idle connection.
  void CloseIdle();

 private:
  struct Impl;
  explicit Client(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace settle::net
