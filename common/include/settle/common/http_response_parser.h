#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "settle/common/http_chunked_decoder.h"

namespace settle {

// Reads one HTTP/1.x response from bytes as they arrive, for a keep-alive client: the status,
// whether the connection may carry another request, and the start of the body. Bodies are
// framed by Content-Length, chunked transfer coding, or the end of the connection; 1xx
// interim answers are skipped, and 204 and 304 have no body.
//
// The whole body is consumed (so that the connection stays usable), but only its first
// `max_body_bytes` are kept.
class HttpResponseParser {
 public:
  enum class State { kNeedMore, kDone, kError };

  // A response head over this size is malformed rather than a reason to keep reading.
  static constexpr std::size_t kMaxHeadBytes = 64 * 1024;

  explicit HttpResponseParser(std::size_t max_body_bytes) : max_body_bytes_(max_body_bytes) {}

  // Takes bytes from the start of `data`: all of them unless the response ends within them,
  // in which case `consumed` tells where it ended.
  State Feed(std::string_view data, std::size_t& consumed);

  // The peer closed the connection: the end of a body that runs to the close, else an error.
  State Finish();

  State state() const { return state_; }
  bool started() const { return started_; }  // any byte of a response has arrived
  int status() const { return status_; }
  // Whether the connection may carry the next request (HTTP/1.1 without "Connection: close",
  // or HTTP/1.0 with "Connection: keep-alive", and a body not framed by the close).
  bool keep_alive() const { return keep_alive_; }
  const std::string& body() const { return body_; }  // its first max_body_bytes
  std::string TakeBody() { return std::move(body_); }
  const std::string& error() const { return error_; }

 private:
  enum class Phase { kHead, kLength, kChunked, kToClose, kEnd };

  State Fail(std::string why);
  // Parses head_ (which ends with the blank line); sets the phase for the body.
  State ParseHead();
  void Keep(std::string_view bytes);

  const std::size_t max_body_bytes_;
  State state_ = State::kNeedMore;
  Phase phase_ = Phase::kHead;
  bool started_ = false;
  std::string head_;
  std::uint64_t remaining_ = 0;  // body bytes still to come
  HttpChunkedDecoder chunked_;
  std::string decoded_;  // chunk bytes on their way to body_
  int status_ = 0;
  bool keep_alive_ = false;
  std::string body_;
  std::string error_;
};

}  // namespace settle
