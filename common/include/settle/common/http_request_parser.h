#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "settle/common/http_chunked_decoder.h"
#include "settle/common/http_request.h"

namespace settle {

// Reads HTTP/1.x requests from a connection's bytes as they arrive: the head, then a body
// framed by Content-Length or chunked transfer coding. What it refuses, it refuses with the
// status to answer: 400 malformed, 413 body over max_body_bytes, 431 head over kMaxHeadBytes,
// 501 an unknown transfer coding, 505 another HTTP version.
class HttpRequestParser {
 public:
  enum class State { kNeedMore, kDone, kError };

  static constexpr std::size_t kMaxHeadBytes = 64 * 1024;

  explicit HttpRequestParser(std::size_t max_body_bytes) : max_body_bytes_(max_body_bytes) {}

  // Takes bytes from the start of `data`, up to the end of the request; `consumed` says how
  // many (the rest belongs to the next request).
  State Feed(std::string_view data, std::size_t& consumed);

  // True once, when the head asked "Expect: 100-continue" and its body is still to come: the
  // server should answer "100 Continue" before the client sends it.
  bool TakeContinueRequest();

  State state() const { return state_; }
  bool started() const { return started_; }
  // HTTP/1.1 without "Connection: close", or HTTP/1.0 with "Connection: keep-alive".
  bool keep_alive() const { return keep_alive_; }
  HttpRequest& request() { return request_; }
  int error_status() const { return error_status_; }
  const std::string& error() const { return error_; }

  // Ready for the next request on the same connection.
  void Reset();

 private:
  enum class Phase { kHead, kLength, kChunked, kEnd };
  State Fail(int status, std::string why);
  State ParseHead();

  const std::size_t max_body_bytes_;
  State state_ = State::kNeedMore;
  Phase phase_ = Phase::kHead;
  bool started_ = false;
  bool keep_alive_ = false;
  bool continue_pending_ = false;
  std::string head_;
  std::uint64_t remaining_ = 0;
  HttpChunkedDecoder chunked_;
  HttpRequest request_;
  int error_status_ = 0;
  std::string error_;
};

}  // namespace settle
