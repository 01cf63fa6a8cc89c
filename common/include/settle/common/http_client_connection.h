#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "settle/common/clock.h"

namespace settle {

// One keep-alive HTTP/1.1 client connection on a blocking socket with TCP_NODELAY: a request
// goes out in one system call (head and body together) and the answer is read with plain
// recv calls, each bounded by the exchange's timeout through SO_RCVTIMEO. Nothing polls.
//
// Thread-safety: none; a connection serves one exchange at a time.
class HttpClientConnection {
 public:
  // What went wrong, for the caller's message; kNone on an answer, whatever its status.
  enum class Failure {
    kNone,
    kResolve,         // the host name does not resolve
    kConnect,         // refused or unreachable on every address
    kConnectTimeout,  // no address accepted within the timeout
    kWrite,           // the request could not be sent (the peer closed, or a reset)
    kTimeout,         // a read waited longer than the timeout
    kClosed,          // the peer closed the connection before a complete answer
    kMalformed,       // the answer is not HTTP/1.x
  };

  // A few words for a failure: "read timed out", "malformed answer", ...
  static const char* Describe(Failure failure);

  struct Answer {
    Failure failure = Failure::kNone;
    std::string detail;  // for kResolve and kMalformed: what exactly
    int status = 0;
    std::string body;  // its first max_body_bytes
  };

  // Connects to host:port, trying each address the host resolves to (localhost: ::1, then
  // 127.0.0.1) until one accepts, all within `timeout`. On failure, `failure` says why.
  static std::unique_ptr<HttpClientConnection> Connect(const std::string& host, int port,
                                                       Duration timeout, Answer& failure);

  ~HttpClientConnection();
  HttpClientConnection(const HttpClientConnection&) = delete;
  HttpClientConnection& operator=(const HttpClientConnection&) = delete;

  // Sends `head` (request line and headers, ending with the blank line) followed by `body`,
  // and reads the answer. `timeout` bounds the send and each read. The whole body is read
  // so that the connection stays usable; only its first max_body_bytes are kept.
  Answer Exchange(std::string_view head, std::string_view body, Duration timeout,
                  std::size_t max_body_bytes);

  // Whether another request may follow on this connection: the last answer was complete,
  // kept alive, and followed by nothing.
  bool reusable() const { return reusable_; }

 private:
  explicit HttpClientConnection(int fd) : fd_(fd) {}
  bool SetTimeout(Duration timeout);
  bool SendAll(std::string_view head, std::string_view body);

  int fd_;
  bool reusable_ = true;
  Duration timeout_set_{-1};
};

}  // namespace settle
