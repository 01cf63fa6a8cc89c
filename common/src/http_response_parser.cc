#include "settle/common/http_response_parser.h"

#include <algorithm>
#include <cctype>
#include <utility>
#include <vector>

namespace settle {
namespace {

constexpr std::size_t kMaxLineBytes = 4096;  // a chunk-size line or a trailer field

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The comma-separated tokens of a header value, trimmed.
std::vector<std::string_view> Tokens(std::string_view value) {
  std::vector<std::string_view> tokens;
  while (!value.empty()) {
    const std::size_t comma = value.find(',');
    tokens.push_back(Trim(value.substr(0, comma)));
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return tokens;
}

bool ParseDecimal(std::string_view s, std::uint64_t& out) {
  if (s.empty() || s.size() > 18) return false;
  out = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    out = out * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return true;
}

bool ParseHex(std::string_view s, std::uint64_t& out) {
  if (s.empty() || s.size() > 15) return false;
  out = 0;
  for (char c : s) {
    const int digit = std::isdigit(static_cast<unsigned char>(c))
                          ? c - '0'
                          : (std::isxdigit(static_cast<unsigned char>(c))
                                 ? std::tolower(static_cast<unsigned char>(c)) - 'a' + 10
                                 : -1);
    if (digit < 0) return false;
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

}  // namespace

HttpResponseParser::State HttpResponseParser::Fail(std::string why) {
  error_ = std::move(why);
  state_ = State::kError;
  return state_;
}

void HttpResponseParser::Keep(std::string_view bytes) {
  const std::size_t room = max_body_bytes_ - std::min(max_body_bytes_, body_.size());
  body_.append(bytes.substr(0, room));
}

bool HttpResponseParser::TakeLine(std::string_view data, std::size_t& pos) {
  const std::size_t eol = data.find('\n', pos);
  const std::size_t end = eol == std::string_view::npos ? data.size() : eol + 1;
  line_.append(data.substr(pos, end - pos));
  pos = end;
  if (line_.size() > kMaxLineBytes) {
    Fail("a chunk line of the answer is over " + std::to_string(kMaxLineBytes) + " bytes");
    return false;
  }
  return eol != std::string_view::npos;
}

HttpResponseParser::State HttpResponseParser::ParseHead() {
  std::string_view rest(head_);
  auto next_line = [&rest]() {
    const std::size_t eol = rest.find("\r\n");
    std::string_view line = rest.substr(0, eol);
    rest.remove_prefix(eol + 2);
    return line;
  };
  const std::string_view status_line = next_line();
  // "HTTP/1.x NNN reason"; the reason may be empty or missing.
  if (status_line.size() < 12 || status_line.substr(0, 7) != "HTTP/1." ||
      (status_line[7] != '0' && status_line[7] != '1') || status_line[8] != ' ' ||
      !std::isdigit(static_cast<unsigned char>(status_line[9])) ||
      !std::isdigit(static_cast<unsigned char>(status_line[10])) ||
      !std::isdigit(static_cast<unsigned char>(status_line[11])) ||
      (status_line.size() > 12 && status_line[12] != ' ')) {
    return Fail("malformed status line '" + std::string(status_line.substr(0, 80)) + "'");
  }
  const bool http10 = status_line[7] == '0';
  status_ = (status_line[9] - '0') * 100 + (status_line[10] - '0') * 10 + (status_line[11] - '0');

  bool close = http10;
  bool chunked = false;
  bool other_coding = false;
  bool has_length = false;
  std::uint64_t length = 0;
  while (!rest.empty()) {
    const std::string_view line = next_line();
    if (line.empty()) break;  // the blank line ending the head
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0 || line.front() == ' ' ||
        line.front() == '\t') {
      return Fail("malformed header line '" + std::string(line.substr(0, 80)) + "'");
    }
    const std::string_view name = line.substr(0, colon);
    const std::string_view value = Trim(line.substr(colon + 1));
    if (EqualsIgnoreCase(name, "Content-Length")) {
      std::uint64_t parsed = 0;
      if (!ParseDecimal(value, parsed) || (has_length && parsed != length)) {
        return Fail("invalid Content-Length '" + std::string(value.substr(0, 40)) + "'");
      }
      has_length = true;
      length = parsed;
    } else if (EqualsIgnoreCase(name, "Transfer-Encoding")) {
      const std::vector<std::string_view> codings = Tokens(value);
      chunked = !codings.empty() && EqualsIgnoreCase(codings.back(), "chunked");
      other_coding = !chunked;
    } else if (EqualsIgnoreCase(name, "Connection")) {
      for (std::string_view token : Tokens(value)) {
        if (EqualsIgnoreCase(token, "close")) close = true;
        if (EqualsIgnoreCase(token, "keep-alive") && http10) close = false;
      }
    }
  }

  if (status_ >= 100 && status_ < 200) {
    if (status_ == 101) return Fail("the participant switched protocols (HTTP 101)");
    head_.clear();  // an interim answer: the real one follows
    status_ = 0;
    return state_;
  }
  keep_alive_ = !close;
  if (status_ == 204 || status_ == 304) {
    phase_ = Phase::kEnd;
  } else if (chunked) {
    phase_ = Phase::kChunkSize;
  } else if (other_coding || !has_length) {
    phase_ = Phase::kToClose;  // framed by the end of the connection
    keep_alive_ = false;
  } else {
    remaining_ = length;
    phase_ = length == 0 ? Phase::kEnd : Phase::kLength;
  }
  return state_;
}

HttpResponseParser::State HttpResponseParser::Feed(std::string_view data, std::size_t& consumed) {
  consumed = 0;
  if (state_ != State::kNeedMore) return state_;
  if (!data.empty()) started_ = true;
  std::size_t pos = 0;
  while (state_ == State::kNeedMore && phase_ != Phase::kEnd && pos < data.size()) {
    const std::string_view rest = data.substr(pos);
    switch (phase_) {
      case Phase::kHead: {
        const std::size_t before = head_.size();
        head_.append(rest);
        const std::size_t end = head_.find("\r\n\r\n", before < 3 ? 0 : before - 3);
        if (end == std::string::npos) {
          pos = data.size();
          if (head_.size() > kMaxHeadBytes) {
            return Fail("the answer's head is over " + std::to_string(kMaxHeadBytes) + " bytes");
          }
          break;
        }
        head_.resize(end + 4);
        pos += end + 4 - before;
        ParseHead();
        break;
      }
      case Phase::kLength:
      case Phase::kChunkData: {
        const std::size_t n =
            static_cast<std::size_t>(std::min<std::uint64_t>(remaining_, rest.size()));
        Keep(rest.substr(0, n));
        pos += n;
        remaining_ -= n;
        if (remaining_ == 0) {
          phase_ = phase_ == Phase::kLength ? Phase::kEnd : Phase::kChunkEnd;
        }
        break;
      }
      case Phase::kChunkSize: {
        if (!TakeLine(data, pos)) break;
        std::string_view size = WithoutEol(line_);
        size = Trim(size.substr(0, size.find(';')));  // chunk extensions are ignored
        std::uint64_t chunk = 0;
        if (!ParseHex(size, chunk)) {
          return Fail("invalid chunk size '" + std::string(size.substr(0, 40)) + "'");
        }
        line_.clear();
        remaining_ = chunk;
        phase_ = chunk == 0 ? Phase::kTrailer : Phase::kChunkData;
        break;
      }
      case Phase::kChunkEnd: {
        if (!TakeLine(data, pos)) break;
        if (!WithoutEol(line_).empty()) return Fail("a chunk is longer than its size");
        line_.clear();
        phase_ = Phase::kChunkSize;
        break;
      }
      case Phase::kTrailer: {
        if (!TakeLine(data, pos)) break;
        const bool blank = WithoutEol(line_).empty();
        line_.clear();
        if (blank) phase_ = Phase::kEnd;
        break;
      }
      case Phase::kToClose:
        Keep(rest);
        pos = data.size();
        break;
      case Phase::kEnd:
        break;
    }
  }
  consumed = pos;
  if (state_ == State::kNeedMore && phase_ == Phase::kEnd) state_ = State::kDone;
  return state_;
}

HttpResponseParser::State HttpResponseParser::Finish() {
  if (state_ != State::kNeedMore) return state_;
  if (phase_ == Phase::kToClose) {
    state_ = State::kDone;
    return state_;
  }
  return Fail(started_ ? "connection closed before a complete answer"
                       : "connection closed before any answer");
}

}  // namespace settle
