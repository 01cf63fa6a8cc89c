#pragma once

#include <cstddef>
#include <string>

#include <boost/asio/ip/tcp.hpp>

namespace settle::testing::fault_proxy {

// Beyond these a message is refused rather than buffered: the proxy must survive a peer that
// sends garbage or never stops sending.
inline constexpr std::size_t kMaxHeadBytes = 64 * 1024;
inline constexpr std::size_t kMaxBodyBytes = 16 * 1024 * 1024;

enum class ReadStatus {
  kOk,
  kClosed,     // the connection ended (or failed) before the first byte of the message
  kBroken,     // the connection ended or failed in the middle of the message
  kMalformed,  // not an HTTP/1.x message the proxy accepts
  kTooLarge,   // the head or the body is over the limits
};

// A request as the client sent it: `head` and `body` are forwarded byte for byte.
struct Request {
  std::string head;  // request line and headers, through the blank line
  std::string body;
  std::string method;
  std::string path;  // the target without the query
  std::size_t content_length = 0;
  bool keep_alive = true;  // false: the client wants the connection closed after the answer
  bool expects_continue = false;
};

// An answer as the upstream sent it: `head` and `body` go back to the client unchanged.
struct Response {
  std::string head;
  std::string body;  // as framed on the wire: a chunked body keeps its chunk lines
  int status = 0;
  bool keep_alive = true;  // false: the connection ends with this answer
  // Whether a client can tell that a cut-off body is incomplete (a positive Content-Length or
  // chunks); a body that runs until the connection closes looks complete at any length.
  bool cut_detectable = false;
};

// Reads HTTP/1.x messages from one connection at a time. Bytes read past the end of a
// message (a pipelined next request) are kept for the next read, so one reader belongs to one
// connection; Clear() when the connection is replaced. Requests must have Content-Length
// framing (or no body); answers may also be chunked or run until the connection closes.
// Blocking; a read ends early when the socket is shut down.
class WireReader {
 public:
  // The head of a request; the body follows with ReadRequestBody (after a 100 Continue if the
  // client waits for one).
  ReadStatus ReadRequestHead(boost::asio::ip::tcp::socket& socket, Request& request);
  ReadStatus ReadRequestBody(boost::asio::ip::tcp::socket& socket, Request& request);

  // One final answer; interim 1xx answers are skipped (the proxy already holds the whole
  // request body, so nobody waits for them). An answer to HEAD has no body.
  ReadStatus ReadResponse(boost::asio::ip::tcp::socket& socket, bool head_request,
                          Response& response);

  // Whether bytes past the last message are waiting, which an idle upstream should not send.
  bool HasBuffered() const { return !buffer_.empty(); }
  void Clear() { buffer_.clear(); }

 private:
  enum class FirstLine { kRequest, kStatus };

  ReadStatus ReadHead(boost::asio::ip::tcp::socket& socket, FirstLine kind, std::string& head);
  ReadStatus ReadExactly(boost::asio::ip::tcp::socket& socket, std::size_t count, std::string& out);
  ReadStatus ReadChunked(boost::asio::ip::tcp::socket& socket, std::string& out);
  ReadStatus ReadLine(boost::asio::ip::tcp::socket& socket, std::string& out, std::size_t limit);
  ReadStatus ReadUntilClose(boost::asio::ip::tcp::socket& socket, std::string& out);
  // Appends what the socket has to buffer_; false when the connection ended or failed.
  bool Fill(boost::asio::ip::tcp::socket& socket);

  std::string buffer_;
};

}  // namespace settle::testing::fault_proxy
