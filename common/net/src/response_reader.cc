#include "settle/net/response_reader.h"

#include <boost/asio/buffer.hpp>

#include <algorithm>
#include <limits>

#include "framing_errors.h"
#include "message_parser.h"
#include "read_buffer.h"

namespace settle::net {
namespace http = boost::beast::http;
namespace {

// The start of the answer's first line, printable, for a message.
std::string FirstLine(std::string_view data) {
  std::string line;
  for (char c : data.substr(0, std::min<std::size_t>(data.find_first_of("\r\n"), 60))) {
    line += (c < 0x20 || c == 0x7f) ? '?' : c;
  }
  return line;
}

}  // namespace

struct ResponseReader::Parser {
  Parser(std::size_t max_head_bytes, std::size_t keep_body_bytes)
      : beast({.max_fields = 1000,
               .max_trailer_bytes = max_head_bytes,
               .keep_body = keep_body_bytes}) {
    beast.header_limit(std::numeric_limits<std::uint32_t>::max());  // measured by the reader
    // Kept to a prefix by the parser. Not boost::none: Beast 1.74 compares a length with the
    // unset optional and refuses every body.
    beast.body_limit(std::numeric_limits<std::uint64_t>::max());
    beast.eager(true);
  }
  detail::MessageParser<false> beast;
};

ResponseReader::ResponseReader(std::size_t max_head_bytes, std::size_t keep_body_bytes)
    : max_head_bytes_(max_head_bytes),
      keep_body_bytes_(keep_body_bytes),
      buffer_(std::make_unique<detail::ReadBuffer>()) {}

ResponseReader::~ResponseReader() = default;

std::span<char> ResponseReader::Prepare(std::size_t n) { return buffer_->Prepare(n); }

void ResponseReader::Commit(std::size_t n) {
  buffer_->Commit(n);
  if (n > 0) received_ = true;
}

void ResponseReader::Append(std::string_view bytes) {
  buffer_->Append(bytes);
  if (!bytes.empty()) received_ = true;
}

std::string_view ResponseReader::leftover() const { return buffer_->unread(); }

bool ResponseReader::reusable() const { return done_ && keep_alive_ && buffer_->unread().empty(); }

bool ResponseReader::got_some() const { return received_; }

ResponseReader::Step ResponseReader::Malformed(std::string problem) {
  problem_ = std::move(problem);
  return Step::kMalformed;
}

ResponseReader::Step ResponseReader::Take() {
  detail::MessageParser<false>& beast = parser_->beast;
  done_ = true;
  keep_alive_ = beast.persistent() && !beast.need_eof();
  status_ = beast.status;
  headers_ = std::move(beast.headers);
  body_ = std::move(beast.body);
  body_bytes_ = beast.body_bytes;
  return Step::kResponse;
}

ResponseReader::Step ResponseReader::Parse() {
  if (done_) return Step::kResponse;
  if (!problem_.empty()) return Step::kMalformed;
  for (;;) {
    if (parser_ == nullptr) {
      // The whole head, or nothing: how the bytes were cut never changes the outcome.
      const std::string_view data = buffer_->unread();
      const std::size_t head_end = detail::EndOfHead(data);
      if ((head_end == std::string_view::npos ? data.size() : head_end) > max_head_bytes_) {
        return Malformed("its head is larger than " + std::to_string(max_head_bytes_) + " bytes");
      }
      if (head_end == std::string_view::npos) return Step::kNeedMore;
      const std::string_view head = data.substr(0, head_end);
      parser_ = std::make_unique<Parser>(max_head_bytes_, keep_body_bytes_);
      boost::beast::error_code ec;
      const std::size_t used =
          parser_->beast.put(boost::asio::buffer(head.data(), head.size()), ec);
      if (ec == http::error::need_more || (!ec && !parser_->beast.is_header_done())) {
        return Malformed("lines must end with CRLF '" + FirstLine(head) + "'");
      }
      if (ec) {
        if (parser_->beast.refusal_status != 0) return Malformed(parser_->beast.refusal);
        return Malformed(DescribeResponseError(ec) + " '" + FirstLine(head) + "'");
      }
      buffer_->Consume(used);
    }
    detail::MessageParser<false>& beast = parser_->beast;
    while (!beast.is_done()) {
      const std::string_view data = buffer_->unread();
      if (data.empty()) return Step::kNeedMore;
      boost::beast::error_code ec;
      const std::size_t used = detail::PutWindow(beast, data, max_head_bytes_, ec);
      buffer_->Consume(used);
      if (ec == detail::kNeedsMore) return Step::kNeedMore;
      if (ec == detail::kLineTooLong) {
        return Malformed("a chunk line or trailer longer than " + std::to_string(max_head_bytes_) +
                         " bytes");
      }
      if (ec) {
        if (beast.refusal_status != 0) return Malformed(beast.refusal);
        return Malformed(DescribeResponseError(ec));
      }
    }
    // An interim answer ("100 Continue"): the real one follows on the same connection.
    if (beast.status >= 100 && beast.status < 200 && beast.status != 101) {
      parser_.reset();
      continue;
    }
    return Take();
  }
}

ResponseReader::Step ResponseReader::Eof() {
  const Step step = Parse();
  if (step != Step::kNeedMore) return step;
  if (parser_ == nullptr && buffer_->unread().empty()) {
    // Nothing at all: closed before an answer. After an interim answer: cut off.
    return received_ ? Malformed("cut off after an interim answer") : Step::kNeedMore;
  }
  if (parser_ == nullptr) return Malformed("cut off before its end");
  boost::beast::error_code ec;
  parser_->beast.put_eof(ec);
  if (ec || !parser_->beast.is_done() || !buffer_->unread().empty()) {
    return Malformed(ec ? DescribeResponseError(ec) : "cut off before its end");
  }
  return Take();
}

}  // namespace settle::net
