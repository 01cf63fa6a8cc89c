#include "settle/common/http_response_parser.h"

#include <algorithm>
#include <cctype>
#include <utility>
#include <vector>

#include "http_head.h"

namespace settle {

HttpResponseParser::State HttpResponseParser::Fail(std::string why) {
  error_ = std::move(why);
  state_ = State::kError;
  return state_;
}

void HttpResponseParser::Keep(std::string_view bytes) {
  const std::size_t room = max_body_bytes_ - std::min(max_body_bytes_, body_.size());
  body_.append(bytes.substr(0, room));
}

HttpResponseParser::State HttpResponseParser::ParseHead() {
  std::string_view rest(head_);
  const std::string_view status_line = http_head::NextLine(rest);
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
  http_head::Framing framing;
  if (std::string error = http_head::ParseFields(rest, framing, nullptr); !error.empty()) {
    return Fail(std::move(error));
  }
  const bool close = framing.close || (http10 && !framing.keep_alive);

  if (status_ >= 100 && status_ < 200) {
    if (status_ == 101) return Fail("the participant switched protocols (HTTP 101)");
    head_.clear();  // an interim answer: the real one follows
    status_ = 0;
    return state_;
  }
  keep_alive_ = !close;
  if (status_ == 204 || status_ == 304) {
    phase_ = Phase::kEnd;
  } else if (framing.chunked) {
    phase_ = Phase::kChunked;
  } else if (framing.other_coding || !framing.has_length) {
    phase_ = Phase::kToClose;  // framed by the end of the connection
    keep_alive_ = false;
  } else {
    remaining_ = framing.length;
    phase_ = framing.length == 0 ? Phase::kEnd : Phase::kLength;
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
        std::size_t taken = 0;
        const http_head::HeadProgress progress =
            http_head::AppendHead(head_, rest, kMaxHeadBytes, taken);
        pos += taken;
        if (progress == http_head::HeadProgress::kTooLarge) {
          return Fail("the answer's head is over " + std::to_string(kMaxHeadBytes) + " bytes");
        }
        if (progress == http_head::HeadProgress::kIncomplete) break;
        ParseHead();
        break;
      }
      case Phase::kLength: {
        const std::size_t n =
            static_cast<std::size_t>(std::min<std::uint64_t>(remaining_, rest.size()));
        Keep(rest.substr(0, n));
        pos += n;
        remaining_ -= n;
        if (remaining_ == 0) phase_ = Phase::kEnd;
        break;
      }
      case Phase::kChunked: {
        const HttpChunkedDecoder::State chunks = chunked_.Feed(data, pos, decoded_);
        Keep(decoded_);
        decoded_.clear();
        if (chunks == HttpChunkedDecoder::State::kError) return Fail(chunked_.error());
        if (chunks == HttpChunkedDecoder::State::kDone) phase_ = Phase::kEnd;
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
