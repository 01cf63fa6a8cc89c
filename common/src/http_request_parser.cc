#include "settle/common/http_request_parser.h"

#include <algorithm>
#include <utility>

#include "http_head.h"

namespace settle {
namespace {

// A token: the characters RFC 9110 allows in a method name.
bool IsToken(std::string_view s) {
  if (s.empty()) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') ||
           std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
  });
}

bool IsTargetChar(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u > 0x20 && u != 0x7f;
}

}  // namespace

HttpRequestParser::State HttpRequestParser::Fail(int status, std::string why) {
  error_status_ = status;
  error_ = std::move(why);
  state_ = State::kError;
  return state_;
}

void HttpRequestParser::Reset() {
  state_ = State::kNeedMore;
  phase_ = Phase::kHead;
  started_ = false;
  keep_alive_ = false;
  continue_pending_ = false;
  head_.clear();
  remaining_ = 0;
  chunked_ = HttpChunkedDecoder();
  request_ = HttpRequest();
  error_status_ = 0;
  error_.clear();
}

bool HttpRequestParser::TakeContinueRequest() {
  const bool pending = continue_pending_;
  continue_pending_ = false;
  return pending;
}

HttpRequestParser::State HttpRequestParser::ParseHead() {
  std::string_view rest(head_);
  // "METHOD target HTTP/1.x"
  const std::string_view line = http_head::NextLine(rest);
  const std::size_t first_space = line.find(' ');
  const std::size_t last_space = line.rfind(' ');
  if (first_space == std::string_view::npos || last_space == first_space) {
    return Fail(400, "malformed request line");
  }
  const std::string_view method = line.substr(0, first_space);
  const std::string_view target = line.substr(first_space + 1, last_space - first_space - 1);
  const std::string_view version = line.substr(last_space + 1);
  if (!IsToken(method)) return Fail(400, "malformed request method");
  if (target.empty() || target.front() != '/' ||
      !std::all_of(target.begin(), target.end(), IsTargetChar)) {
    return Fail(400, "malformed request target");
  }
  if (version != "HTTP/1.1" && version != "HTTP/1.0") {
    return Fail(505, "unsupported HTTP version '" + std::string(version.substr(0, 20)) + "'");
  }
  http_head::Framing framing;
  if (std::string error = http_head::ParseFields(rest, framing, &request_.headers);
      !error.empty()) {
    return Fail(400, std::move(error));
  }
  request_.method = std::string(method);
  request_.target = std::string(target);
  const std::size_t question = target.find('?');
  request_.path = std::string(target.substr(0, question));
  if (question != std::string_view::npos) {
    request_.params = ParseQueryString(target.substr(question + 1));
  }
  keep_alive_ = version == "HTTP/1.1" ? !framing.close : framing.keep_alive && !framing.close;

  if (framing.other_coding) return Fail(501, "unsupported transfer coding");
  if (framing.chunked) {
    phase_ = Phase::kChunked;
  } else if (framing.has_length && framing.length > 0) {
    if (framing.length > max_body_bytes_) {
      return Fail(413, "body larger than " + std::to_string(max_body_bytes_) + " bytes");
    }
    remaining_ = framing.length;
    request_.body.reserve(static_cast<std::size_t>(framing.length));
    phase_ = Phase::kLength;
  } else {
    phase_ = Phase::kEnd;  // a request without framing has no body
  }
  continue_pending_ = framing.expect_continue && phase_ != Phase::kEnd;
  return state_;
}

HttpRequestParser::State HttpRequestParser::Feed(std::string_view data, std::size_t& consumed) {
  consumed = 0;
  if (state_ != State::kNeedMore) return state_;
  if (!data.empty()) started_ = true;
  std::size_t pos = 0;
  while (state_ == State::kNeedMore && phase_ != Phase::kEnd && pos < data.size()) {
    switch (phase_) {
      case Phase::kHead: {
        // Blank lines before a request are allowed (RFC 9112 §2.2).
        while (head_.empty() && pos < data.size() && (data[pos] == '\r' || data[pos] == '\n')) {
          ++pos;
        }
        if (pos == data.size()) break;
        std::size_t taken = 0;
        const http_head::HeadProgress progress =
            http_head::AppendHead(head_, data.substr(pos), kMaxHeadBytes, taken);
        pos += taken;
        if (progress == http_head::HeadProgress::kTooLarge) {
          return Fail(431, "request head over " + std::to_string(kMaxHeadBytes) + " bytes");
        }
        if (progress == http_head::HeadProgress::kIncomplete) break;
        ParseHead();
        break;
      }
      case Phase::kLength: {
        const auto n =
            static_cast<std::size_t>(std::min<std::uint64_t>(remaining_, data.size() - pos));
        request_.body.append(data.substr(pos, n));
        pos += n;
        remaining_ -= n;
        if (remaining_ == 0) phase_ = Phase::kEnd;
        break;
      }
      case Phase::kChunked: {
        const HttpChunkedDecoder::State chunks = chunked_.Feed(data, pos, request_.body);
        if (request_.body.size() > max_body_bytes_) {
          return Fail(413, "body larger than " + std::to_string(max_body_bytes_) + " bytes");
        }
        if (chunks == HttpChunkedDecoder::State::kError) return Fail(400, chunked_.error());
        if (chunks == HttpChunkedDecoder::State::kDone) phase_ = Phase::kEnd;
        break;
      }
      case Phase::kEnd:
        break;
    }
  }
  consumed = pos;
  if (state_ == State::kNeedMore && phase_ == Phase::kEnd) state_ = State::kDone;
  return state_;
}

}  // namespace settle
