#include "settle/common/http_chunked_decoder.h"

#include <algorithm>
#include <cctype>
#include <utility>

namespace settle {
namespace {

constexpr std::size_t kMaxLineBytes = 4096;  // a chunk-size line or a trailer field

bool ParseHex(std::string_view s, std::uint64_t& out) {
  if (s.empty() || s.size() > 15) return false;
  out = 0;
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (!std::isxdigit(u)) return false;
    const int digit = std::isdigit(u) ? c - '0' : std::tolower(u) - 'a' + 10;
    out = out * 16 + static_cast<std::uint64_t>(digit);
  }
  return true;
}

// A complete line (ending in "\n") without its "\r\n" or "\n".
std::string_view WithoutEol(std::string_view line) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

HttpChunkedDecoder::State HttpChunkedDecoder::Fail(std::string why) {
  error_ = std::move(why);
  state_ = State::kError;
  return state_;
}

bool HttpChunkedDecoder::TakeLine(std::string_view data, std::size_t& pos) {
  const std::size_t eol = data.find('\n', pos);
  const std::size_t end = eol == std::string_view::npos ? data.size() : eol + 1;
  line_.append(data.substr(pos, end - pos));
  pos = end;
  if (line_.size() > kMaxLineBytes) {
    Fail("a chunk line is over " + std::to_string(kMaxLineBytes) + " bytes");
    return false;
  }
  return eol != std::string_view::npos;
}

HttpChunkedDecoder::State HttpChunkedDecoder::Feed(std::string_view data, std::size_t& pos,
                                                   std::string& body) {
  while (state_ == State::kNeedMore && phase_ != Phase::kEnd && pos < data.size()) {
    switch (phase_) {
      case Phase::kSize: {
        if (!TakeLine(data, pos)) break;
        std::string_view size = WithoutEol(line_);
        size = Trim(size.substr(0, size.find(';')));  // chunk extensions are ignored
        std::uint64_t chunk = 0;
        if (!ParseHex(size, chunk)) {
          return Fail("invalid chunk size '" + std::string(size.substr(0, 40)) + "'");
        }
        line_.clear();
        remaining_ = chunk;
        phase_ = chunk == 0 ? Phase::kTrailer : Phase::kData;
        break;
      }
      case Phase::kData: {
        const auto n =
            static_cast<std::size_t>(std::min<std::uint64_t>(remaining_, data.size() - pos));
        body.append(data.substr(pos, n));
        pos += n;
        remaining_ -= n;
        if (remaining_ == 0) phase_ = Phase::kDataEnd;
        break;
      }
      case Phase::kDataEnd: {
        if (!TakeLine(data, pos)) break;
        if (!WithoutEol(line_).empty()) return Fail("a chunk is longer than its size");
        line_.clear();
        phase_ = Phase::kSize;
        break;
      }
      case Phase::kTrailer: {
        if (!TakeLine(data, pos)) break;
        const bool blank = WithoutEol(line_).empty();
        line_.clear();
        if (blank) phase_ = Phase::kEnd;
        break;
      }
      case Phase::kEnd:
        break;
    }
  }
  if (state_ == State::kNeedMore && phase_ == Phase::kEnd) state_ = State::kDone;
  return state_;
}

}  // namespace settle
