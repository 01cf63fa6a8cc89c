#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

#include "settle/net/message.h"

namespace settle::testing {

// A TCP connection to 127.0.0.1:port that sends raw bytes, as a broken or hostile client
// would, and reads raw answers: for testing servers at the framing level.
class RawConnection {
 public:
  explicit RawConnection(int port);
  // The same from a local address of the loopback network (127.0.0.2, say: Linux routes all
  // of 127/8 to the loopback interface), so that a server sees another peer.
  RawConnection(int port, const std::string& from_address);
  ~RawConnection();
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  // false if the server has closed (or reset) the connection.
  bool Send(std::string_view bytes);
  // Ends the sending direction (the server reads end of stream).
  void ShutdownSend();

  struct Answer {
    int status = 0;  // 0: the connection ended (or the timeout passed) before a whole answer
    std::string body;
    net::Headers headers;
    const std::string* Header(std::string_view name) const {
      return net::FindHeader(headers, name);
    }
  };
  // Whether bytes from the server (or its end of the stream) can be read within `timeout`,
  // without reading them.
  bool Readable(std::chrono::milliseconds timeout);
  // The next answer, interim ones ("100 Continue") skipped.
  Answer Read(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // The next `size` bytes exactly as they come; fewer if the connection ends first.
  std::string ReadBytes(std::size_t size,
                        std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // Whether the server ends the connection within `timeout` with no byte more than what was
  // read already: nothing after an answer that closed it.
  bool ClosedWithin(std::chrono::milliseconds timeout = std::chrono::seconds(10));

 private:
  // Reads what is available into pending_, waiting up to `timeout`; false at end of stream,
  // an error, or the timeout.
  bool Fill(std::chrono::milliseconds timeout);

  int fd_ = -1;
  std::string pending_;
};

}  // namespace settle::testing
