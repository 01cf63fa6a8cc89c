#pragma once

#include <cstddef>
#include <string>
#include <utility>  // before Asio, as settle/async/asio.h explains

#include <boost/asio/ip/tcp.hpp>

#include "settle/net/message.h"
#include "settle/net/request_reader.h"

namespace settle::testing::fault_proxy {

// Beyond these a message is refused rather than buffered: the proxy must survive a peer that
// sends garbage or never stops sending.
inline constexpr std::size_t kMaxHeadBytes = 64 * 1024;
inline constexpr std::size_t kMaxBodyBytes = 16 * 1024 * 1024;

enum class ReadStatus {
  kOk,
  kClosed,     // the connection ended (or failed) before the first byte of the message
  kBroken,     // the connection ended or failed in the middle of the message
  kMalformed,  // not an HTTP/1.x message the proxy accepts, or over the limits
};

// A request as the net room's RequestReader framed it: the body is de-chunked.
struct Request {
  net::Request message;
  unsigned version = 11;   // 10 or 11
  bool keep_alive = true;  // false: the client wants the connection closed after the answer
};

// An answer as the net room's ResponseReader framed it; interim 1xx answers are skipped.
struct Response {
  int status = 0;
  net::Headers headers;  // as sent, trailers of a chunked body after them
  std::string body;      // de-chunked
  // Whether the upstream connection may carry another request: the answer allows it and no
  // byte followed it.
  bool reusable = false;
  // Whether the answer ended its connection ("Connection: close", HTTP/1.0 without
  // keep-alive, or a body that ran until the close).
  bool closes = false;
};

// Reads the requests of one client connection with a net::RequestReader, which keeps bytes
// read past a request (a pipelined next one) for the next Read; so one reader belongs to one
// connection. Blocking; a read ends early when the socket is shut down. Not thread-safe.
class ClientReader {
 public:
  explicit ClientReader(boost::asio::ip::tcp::socket& socket);

  // The next whole request. Sends "HTTP/1.1 100 Continue" to a client that waits for it
  // before sending its body. A request whose target is not a path ("/...") is refused: the
  // proxy forwards to one server. kMalformed: refusal() says what is wrong.
  ReadStatus Read(Request& request);
  const std::string& refusal() const { return refusal_; }

 private:
  boost::asio::ip::tcp::socket& socket_;
  net::RequestReader reader_;
  std::string refusal_;
};

// Reads one answer with a fresh net::ResponseReader. kClosed means the connection ended
// before a single byte came (an upstream may close an idle keep-alive connection just as a
// request goes out on it). An answer over the limits, or a "101 Switching Protocols", is
// kMalformed. The ResponseReader cannot tell that an answer belongs to a HEAD request, so
// answers to HEAD must not be read with this. Blocking; ends early when the socket is shut
// down.
ReadStatus ReadResponse(boost::asio::ip::tcp::socket& socket, Response& response);

// The request as the proxy sends it upstream: its request line, its header fields as received
// (trailers included) without the framing ones (Content-Length, Transfer-Encoding, Trailer,
// Connection), a Content-Length when it has a body or had framing fields, and the body.
std::string SerializeRequest(const Request& request);

// The head of the answer as the proxy sends it to the client: "HTTP/1.1", the status, the
// header fields without the framing ones, the body's Content-Length (none for 1xx, 204 and
// 304), and "Connection: close" when `close`. The body follows it unchanged.
std::string SerializeResponseHead(int status, const net::Headers& headers, std::size_t body_bytes,
                                  bool close);

}  // namespace settle::testing::fault_proxy
