#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace settle {

// Decodes an HTTP/1.1 chunked body as its bytes arrive: chunk sizes (extensions ignored), the
// data, the last chunk and any trailer fields. Shared by the request and response parsers.
class HttpChunkedDecoder {
 public:
  enum class State { kNeedMore, kDone, kError };

  // Consumes bytes of `data` from `pos` (advancing it) until the body ends or the data does,
  // appending the decoded bytes to `body`. Stops at the end of the body: what follows is the
  // next message.
  State Feed(std::string_view data, std::size_t& pos, std::string& body);

  const std::string& error() const { return error_; }

 private:
  enum class Phase { kSize, kData, kDataEnd, kTrailer, kEnd };
  // Appends to line_ up to and including "\n"; true once the line is complete.
  bool TakeLine(std::string_view data, std::size_t& pos);
  State Fail(std::string why);

  Phase phase_ = Phase::kSize;
  State state_ = State::kNeedMore;
  std::string line_;
  std::uint64_t remaining_ = 0;
  std::string error_;
};

}  // namespace settle
