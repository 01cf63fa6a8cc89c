#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "settle/net/message.h"

namespace settle::net {
namespace detail {
class ReadBuffer;
}  // namespace detail

struct RequestLimits {
  std::size_t max_head_bytes = 16 * 1024;  // request line and header fields: 431 beyond
  std::size_t max_fields = 100;            // header fields: 431 beyond
  std::size_t max_body_bytes = 1 << 20;    // after de-chunking: 413 beyond
};

// Frames the requests of one connection out of its bytes, strictly (RFC 9112). Beast's
// parser does the framing; this adds what a server must refuse and Beast lets through:
// - a Transfer-Encoding other than exactly "chunked" (an unknown coding, chunked not the
//   final one, any coding in HTTP/1.0), a repeated Content-Length (even with equal values);
// - an HTTP/1.1 request without exactly one Host, an HTTP/1.0 one with several;
// - obsolete line folding (a header line that starts with whitespace);
// - a target that is not a path ("*", an absolute URL);
// - an HTTP version other than 1.0 and 1.1 (505), a head or trailer over the limits (431), an
//   Expect other than 100-continue (417).
// Beast itself refuses Content-Length with Transfer-Encoding, conflicting or malformed
// Content-Length, bare LF line endings, malformed chunk lines and sizes, whitespace before a
// colon and control characters in values. The head is parsed once it is whole (within
// max_head_bytes); trailers are read and dropped, never merged into the header fields.
// Memory stays bounded: the head, each chunk line and the trailers by max_head_bytes, the
// body by max_body_bytes. Once a request is refused the reader takes nothing more: the
// connection must be answered and closed.
//
// Bytes are appended as they arrive, in any pieces: the result never depends on how the
// stream was split. Pipelined requests come out one at a time, in order.
//
// Thread-safety: none; one connection's reader is used by one coroutine.
class RequestReader {
 public:
  enum class Step {
    kNeedMore,        // append more bytes, then Parse again
    kHead,            // (with report_heads) the head is in and checked, nothing of its body taken:
                      // judge head(), then Parse again (returned once per request, before
                      // kExpectContinue)
    kExpectContinue,  // the head is in and asks for "100 Continue" before its body: send it,
                      // then Parse again (returned once per request)
    kRequest,         // a whole request: TakeRequest()
    kRefused,         // answer refusal_status() with refusal(), then close the connection
  };

  // With `report_heads`, Parse stops at each request's head (kHead) so that a server can judge
  // it (route, credentials) before any of its body is read.
  explicit RequestReader(RequestLimits limits = {}, bool report_heads = false);
  ~RequestReader();
  RequestReader(const RequestReader&) = delete;
  RequestReader& operator=(const RequestReader&) = delete;

  // Room for up to `n` more bytes; Commit says how many of them were filled.
  std::span<char> Prepare(std::size_t n);
  void Commit(std::size_t n);
  // Prepare, copy and Commit.
  void Append(std::string_view bytes);

  Step Parse();

  // The request Parse just framed; the next Parse starts on the bytes after it.
  Request TakeRequest();
  // The request being framed, its head parsed and checked (kHead, kExpectContinue, or
  // kNeedMore for its body): method, target, path, params and headers, its body still empty.
  // Valid from kHead until TakeRequest.
  // A server fills in who sent it (remote_address, peer_subject), which TakeRequest keeps.
  const Request& head() const { return head_; }
  Request& head() { return head_; }
  // Whether the connection may carry another request after the one just taken (HTTP/1.1
  // without "Connection: close", or HTTP/1.0 with "keep-alive").
  bool keep_alive() const { return keep_alive_; }
  // 10 or 11: the HTTP version of the request just taken.
  unsigned version() const { return version_; }
  // Whether bytes of a request not yet complete are buffered: a connection waiting in the
  // middle of a request is on the I/O timeout, an idle one on the keep-alive timeout.
  bool mid_request() const;

  int refusal_status() const { return refusal_status_; }
  // What is wrong, naming the part of the request: "Host: missing", "body: larger than ...".
  const std::string& refusal() const { return refusal_; }

 private:
  struct Parser;
  Step Refuse(int status, std::string problem);
  // The checks Beast leaves to the server, once the head is parsed.
  Step CheckHead();
  // Moves the parsed head's start line and fields into head_.
  void TakeHead();

  const RequestLimits limits_;
  const bool report_heads_;
  std::unique_ptr<detail::ReadBuffer> buffer_;
  std::unique_ptr<Parser> parser_;  // the request being framed, its head parsed; else null
  Request head_;                    // its head, once parsed
  // After kHead: what the head's check said next (kNeedMore or kExpectContinue), returned by
  // the next Parse; nullopt otherwise.
  std::optional<Step> after_head_;
  bool keep_alive_ = false;
  unsigned version_ = 11;
  int refusal_status_ = 0;
  std::string refusal_;
};

}  // namespace settle::net
