#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "settle/net/message.h"

namespace settle::net {
namespace detail {
class ReadBuffer;
}  // namespace detail

// Frames one answer out of the bytes a server sends back, with Beast's parser: framed by
// Content-Length, chunked, or the end of the connection; interim 1xx answers ("100
// Continue") are skipped. Only the first `keep_body_bytes` of the body are kept, the rest
// is read and counted, so that a long answer neither grows memory nor spoils a keep-alive
// connection. The head is parsed once it is whole (within max_head_bytes); trailers are read,
// bounded and dropped.
//
// Bytes are appended as they arrive, in any pieces: the result never depends on how the
// stream was split. Thread-safety: none.
class ResponseReader {
 public:
  enum class Step {
    kNeedMore,   // append more bytes (or call Eof when the connection ended)
    kResponse,   // a whole answer: status(), body(), ...
    kMalformed,  // not an HTTP/1.x answer: problem() says why
  };

  ResponseReader(std::size_t max_head_bytes, std::size_t keep_body_bytes);
  ~ResponseReader();
  ResponseReader(const ResponseReader&) = delete;
  ResponseReader& operator=(const ResponseReader&) = delete;

  // Room for up to `n` more bytes; Commit says how many of them were filled.
  std::span<char> Prepare(std::size_t n);
  void Commit(std::size_t n);
  void Append(std::string_view bytes);

  Step Parse();
  // The connection ended: an answer framed by the end of the connection is complete; any
  // other unfinished answer is kMalformed ("cut off before its end"); nothing at all stays
  // kNeedMore (the caller reports a closed connection).
  Step Eof();

  // Of the answer, once Parse returned kResponse.
  int status() const { return status_; }
  const std::string& body() const { return body_; }         // its first keep_body_bytes
  std::uint64_t body_bytes() const { return body_bytes_; }  // the whole body's length
  const Headers& headers() const { return headers_; }
  // Whether the connection may carry another request: the answer allows it and nothing
  // followed it.
  bool reusable() const;
  // Whether any byte arrived at all, interim answers included (a connection closed before
  // one did may have been closed by the server while idle).
  bool got_some() const;
  const std::string& problem() const { return problem_; }
  // Bytes that came after the answer (a server answering pipelined requests).
  std::string_view leftover() const;

 private:
  struct Parser;
  Step Take();
  Step Malformed(std::string problem);

  const std::size_t max_head_bytes_;
  const std::size_t keep_body_bytes_;
  std::unique_ptr<detail::ReadBuffer> buffer_;
  std::unique_ptr<Parser> parser_;  // the answer being framed, its head parsed; else null
  bool received_ = false;
  bool done_ = false;
  bool keep_alive_ = false;
  int status_ = 0;
  std::string body_;
  std::uint64_t body_bytes_ = 0;
  Headers headers_;
  std::string problem_;
};

}  // namespace settle::net
