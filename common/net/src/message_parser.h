#pragma once

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/basic_parser.hpp>
#include <boost/beast/http/error.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "settle/net/message.h"

// The one place where Beast's parser is told what to keep: both readers frame messages with
// it. Beast parses (start line, fields, Content-Length and chunked framing, chunk extensions,
// trailers); this keeps the start line, the header fields (trailers are read and dropped, as
// RFC 9110 section 6.5.1 allows), at most `keep_body` bytes of the body, and what the readers
// check beyond Beast: how often Host, Content-Length, Transfer-Encoding and Expect came, the
// Connection tokens, the number of fields and the size of the trailers.
namespace settle::net::detail {

namespace http = boost::beast::http;

struct ParserLimits {
  std::size_t max_fields = 100;  // header fields, and trailer fields
  std::size_t max_trailer_bytes = 16 * 1024;
  std::size_t keep_body = 1 << 20;  // body bytes kept; the rest is counted
};

template <bool isRequest>
class MessageParser final : public http::basic_parser<isRequest> {
 public:
  explicit MessageParser(ParserLimits limits) : limits_(limits) {}

  // What a callback refused (beyond Beast's own errors), with the status it deserves.
  int refusal_status = 0;
  std::string refusal;

  // The start line.
  std::string method;
  std::string target;
  int version = 11;
  int status = 0;

  Headers headers;  // the header section's fields, in order
  std::size_t hosts = 0;
  std::size_t content_lengths = 0;
  std::size_t transfer_encodings = 0;         // Transfer-Encoding fields
  std::vector<std::string> transfer_codings;  // every Transfer-Encoding element, in order
  std::vector<std::string> expectations;      // every Expect value
  bool connection_close = false;
  bool connection_keep_alive = false;

  std::string body;  // its first keep_body bytes
  std::uint64_t body_bytes = 0;

  // RFC 9112 section 9.3: HTTP/1.1 persists unless "close"; HTTP/1.0 only with "keep-alive"
  // and without "close" (Beast 1.74 lets a 1.0 "keep-alive, close" persist).
  bool persistent() const {
    if (connection_close) return false;
    return version >= 11 || connection_keep_alive;
  }

 private:
  void Refuse(int code, std::string why, boost::beast::error_code& ec) {
    refusal_status = code;
    refusal = std::move(why);
    ec = http::error::bad_value;  // stops the parser; the reader reports `refusal`
  }

  static void SplitTokens(std::string_view value, std::vector<std::string>& out) {
    while (!value.empty()) {
      const std::size_t comma = value.find(',');
      std::string_view item = value.substr(0, comma);
      while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
      while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
      if (!item.empty()) out.emplace_back(item);
      if (comma == std::string_view::npos) break;
      value.remove_prefix(comma + 1);
    }
  }

  void on_request_impl(http::verb, boost::beast::string_view method_string,
                       boost::beast::string_view request_target, int http_version,
                       boost::beast::error_code& ec) override {
    method.assign(method_string.data(), method_string.size());
    target.assign(request_target.data(), request_target.size());
    version = http_version;
    ec = {};
  }

  void on_response_impl(int code, boost::beast::string_view, int http_version,
                        boost::beast::error_code& ec) override {
    status = code;
    version = http_version;
    ec = {};
  }

  void on_field_impl(http::field name, boost::beast::string_view name_string,
                     boost::beast::string_view value, boost::beast::error_code& ec) override {
    ec = {};
    if (this->is_header_done()) {  // a trailer: counted and dropped
      ++trailer_fields_;
      trailer_bytes_ += name_string.size() + value.size() + 4;
      if (trailer_fields_ > limits_.max_fields || trailer_bytes_ > limits_.max_trailer_bytes) {
        Refuse(431,
               "trailer: more than " + std::to_string(limits_.max_fields) + " fields or " +
                   std::to_string(limits_.max_trailer_bytes) + " bytes",
               ec);
      }
      return;
    }
    if (headers.size() >= limits_.max_fields) {
      return Refuse(431, "header: more than " + std::to_string(limits_.max_fields) + " fields", ec);
    }
    const std::string_view text(value.data(), value.size());
    switch (name) {
      case http::field::host:
        ++hosts;
        break;
      case http::field::content_length:
        // "5, 5" is a list of lengths: repeated, even if Beast takes equal ones.
        content_lengths += text.find(',') == std::string_view::npos ? 1 : 2;
        break;
      case http::field::transfer_encoding:
        ++transfer_encodings;
        SplitTokens(text, transfer_codings);
        break;
      case http::field::expect:
        expectations.emplace_back(text);
        break;
      case http::field::connection: {
        std::vector<std::string> tokens;
        SplitTokens(text, tokens);
        for (const std::string& token : tokens) {
          if (EqualsIgnoreCase(token, "close")) connection_close = true;
          if (EqualsIgnoreCase(token, "keep-alive")) connection_keep_alive = true;
        }
        break;
      }
      default:
        break;
    }
    headers.emplace_back(std::string(name_string.data(), name_string.size()), std::string(text));
  }

  void on_header_impl(boost::beast::error_code& ec) override { ec = {}; }

  void on_body_init_impl(const boost::optional<std::uint64_t>& length,
                         boost::beast::error_code& ec) override {
    if (length)
      body.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(*length, limits_.keep_body)));
    ec = {};
  }

  std::size_t Keep(boost::beast::string_view piece) {
    const std::size_t room = limits_.keep_body - std::min(limits_.keep_body, body.size());
    body.append(piece.data(), std::min(room, piece.size()));
    body_bytes += piece.size();
    return piece.size();
  }

  std::size_t on_body_impl(boost::beast::string_view piece, boost::beast::error_code& ec) override {
    ec = {};
    return Keep(piece);
  }

  void on_chunk_header_impl(std::uint64_t, boost::beast::string_view,
                            boost::beast::error_code& ec) override {
    ec = {};
  }

  std::size_t on_chunk_body_impl(std::uint64_t, boost::beast::string_view piece,
                                 boost::beast::error_code& ec) override {
    ec = {};
    return Keep(piece);
  }

  void on_finish_impl(boost::beast::error_code& ec) override { ec = {}; }

  const ParserLimits limits_;
  std::size_t trailer_fields_ = 0;
  std::size_t trailer_bytes_ = 0;
};

// What PutWindow says besides Beast's own errors.
inline const boost::beast::error_code kNeedsMore = http::error::need_more;
inline const boost::beast::error_code kLineTooLong = http::error::buffer_overflow;

// Hands the body part of a message (after its head) to `parser`, at most `window` bytes at a
// time. Beast consumes body bytes as they come but needs a chunk line or a trailer whole;
// never showing it more than `window` bytes at once bounds what is buffered for one, and
// makes the outcome the same however the bytes arrived. Returns the bytes consumed; `ec` is
// clear when the message is done or everything given was consumed, kNeedsMore when more
// bytes must arrive first, kLineTooLong when a chunk line or trailer needs more than
// `window` bytes, or Beast's error.
template <bool isRequest>
std::size_t PutWindow(MessageParser<isRequest>& parser, std::string_view data, std::size_t window,
                      boost::beast::error_code& ec) {
  std::size_t consumed = 0;
  while (!parser.is_done()) {
    const std::string_view rest = data.substr(consumed);
    if (rest.empty()) {
      ec = kNeedsMore;
      return consumed;
    }
    const std::string_view shown = rest.substr(0, window);
    ec = {};
    const std::size_t used = parser.put(boost::asio::buffer(shown.data(), shown.size()), ec);
    consumed += used;
    if (ec && ec != http::error::need_more) return consumed;
    if (ec == http::error::need_more && used == 0) {
      ec = shown.size() >= window ? kLineTooLong : kNeedsMore;
      return consumed;
    }
    if (ec == http::error::need_more && shown.size() == rest.size()) {
      ec = kNeedsMore;  // took what it could of everything there is
      return consumed;
    }
    if (!ec && used == 0) {
      ec = kNeedsMore;
      return consumed;
    }
  }
  ec = {};
  return consumed;
}

// Where the head of a message ends in `data`: just past its first empty line, whether its
// lines end with CRLF or a bare LF (Beast refuses the latter). npos while no empty line came.
inline std::size_t EndOfHead(std::string_view data) {
  for (std::size_t lf = data.find('\n'); lf != std::string_view::npos;
       lf = data.find('\n', lf + 1)) {
    if (lf + 1 < data.size() && data[lf + 1] == '\n') return lf + 2;
    if (lf + 2 < data.size() && data[lf + 1] == '\r' && data[lf + 2] == '\n') return lf + 3;
  }
  return std::string_view::npos;
}

}  // namespace settle::net::detail
