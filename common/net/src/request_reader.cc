#include "settle/net/request_reader.h"

#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include <algorithm>
#include <iterator>

#include "framing_errors.h"

namespace settle::net {
namespace http = boost::beast::http;

struct RequestReader::Parser {
  http::request_parser<http::string_body> beast;
};

namespace {

// RFC 9112 section 2.2: a server should ignore empty lines before a request line (some
// clients send a CRLF after a POST body).
std::size_t LeadingEmptyLines(std::string_view data) {
  std::size_t n = 0;
  while (data.substr(n, 2) == "\r\n") n += 2;
  return n;
}

// A line of the head that starts with whitespace: obsolete line folding (RFC 9112 section
// 5.2), which Beast unfolds silently and a proxy may read differently. Also whitespace between
// the request line and the first field (section 2.2).
bool HasObsFold(std::string_view head) {
  for (std::size_t at = head.find("\r\n"); at != std::string_view::npos;
       at = head.find("\r\n", at + 2)) {
    if (at + 2 < head.size() && (head[at + 2] == ' ' || head[at + 2] == '\t')) return true;
  }
  return false;
}

// Whether a request line Beast refused names a well-formed HTTP version other than 1.x
// ("HTTP/2.0"): that is a 505, not a malformed request.
bool IsOtherHttpVersion(std::string_view data) {
  const std::string_view line = data.substr(0, data.find("\r\n"));
  const std::size_t space = line.rfind(' ');
  if (space == std::string_view::npos) return false;
  const std::string_view version = line.substr(space + 1);
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  return version.size() == 8 && version.substr(0, 5) == "HTTP/" && digit(version[5]) &&
         version[6] == '.' && digit(version[7]) && version[5] != '1';
}

// The comma-separated elements of a list-valued field, trimmed, empty ones dropped.
void SplitList(std::string_view value, std::vector<std::string_view>& out) {
  while (!value.empty()) {
    const std::size_t comma = value.find(',');
    std::string_view item = value.substr(0, comma);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
    if (!item.empty()) out.push_back(item);
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
}

}  // namespace

RequestReader::RequestReader(RequestLimits limits) : limits_(limits) {}

RequestReader::~RequestReader() = default;

std::span<char> RequestReader::Prepare(std::size_t n) {
  // Consumed bytes are dropped once they are most of the buffer, so it does not grow with a
  // long keep-alive connection's history.
  if (read_ > 0 && read_ >= buffer_.size() / 2) {
    buffer_.erase(0, read_);
    read_ = 0;
  }
  prepared_ = buffer_.size();
  buffer_.resize(prepared_ + n);
  return {buffer_.data() + prepared_, n};
}

void RequestReader::Commit(std::size_t n) {
  buffer_.resize(prepared_ + std::min(n, buffer_.size() - prepared_));
  prepared_ = buffer_.size();
}

void RequestReader::Append(std::string_view bytes) {
  std::span<char> room = Prepare(bytes.size());
  std::copy(bytes.begin(), bytes.end(), room.begin());
  Commit(bytes.size());
}

std::string_view RequestReader::Unread() const {
  return std::string_view(buffer_).substr(read_);
}

bool RequestReader::mid_request() const {
  return (parser_ != nullptr && parser_->beast.got_some()) || read_ < buffer_.size();
}

RequestReader::Step RequestReader::Refuse(int status, std::string problem) {
  refusal_status_ = status;
  refusal_ = std::move(problem);
  return Step::kRefused;
}

RequestReader::Step RequestReader::Parse() {
  if (refusal_status_ != 0) return Step::kRefused;
  if (parser_ == nullptr) {
    read_ += LeadingEmptyLines(Unread());
    if (Unread().empty() || Unread() == "\r") return Step::kNeedMore;
    parser_ = std::make_unique<Parser>();
    parser_->beast.header_limit(static_cast<std::uint32_t>(limits_.max_head_bytes));
    parser_->beast.body_limit(limits_.max_body_bytes);
    // Not eager until the head is checked: the parser stops after the head, so that nothing
    // of a body is taken before the head is known to be acceptable.
    parser_->beast.eager(false);
  }
  http::request_parser<http::string_body>& beast = parser_->beast;
  for (;;) {
    if (beast.is_header_done() && !head_checked_) {
      head_checked_ = true;
      beast.eager(true);
      const Step step = CheckHead();
      if (step != Step::kNeedMore) return step;
    }
    if (beast.is_done()) return Step::kRequest;
    const std::string_view data = Unread();
    if (!beast.is_header_done()) {
      const std::size_t end = data.find("\r\n\r\n");
      if (HasObsFold(data.substr(0, end == std::string_view::npos ? data.size() : end + 2))) {
        return Refuse(400, "header: obsolete line folding (a line starting with whitespace)");
      }
      if (end == std::string_view::npos && data.size() > limits_.max_head_bytes) {
        return Refuse(431, "head: larger than " + std::to_string(limits_.max_head_bytes) +
                               " bytes");
      }
    }
    if (data.empty()) return Step::kNeedMore;
    boost::beast::error_code ec;
    const std::size_t used = beast.put(boost::asio::buffer(data.data(), data.size()), ec);
    read_ += used;
    if (ec && ec != http::error::need_more) {
      if (ec == http::error::bad_version && IsOtherHttpVersion(data)) {
        return Refuse(505, "request line: only HTTP/1.0 and HTTP/1.1 are served");
      }
      const FramingError error = DescribeRequestError(ec, limits_);
      return Refuse(error.status, error.problem);
    }
    if (used == 0) return Step::kNeedMore;
  }
}

RequestReader::Step RequestReader::CheckHead() {
  const auto& head = parser_->beast.get();
  const unsigned version = head.version();
  if (version != 10 && version != 11) {
    return Refuse(505, "request line: only HTTP/1.0 and HTTP/1.1 are served");
  }
  if (static_cast<std::size_t>(std::distance(head.begin(), head.end())) > limits_.max_fields) {
    return Refuse(431, "header: more than " + std::to_string(limits_.max_fields) + " fields");
  }
  const std::size_t hosts = head.count(http::field::host);
  if (version == 11 && hosts == 0) return Refuse(400, "Host: missing");
  if (hosts > 1) return Refuse(400, "Host: more than one");
  if (head.count(http::field::content_length) > 1 ||
      head[http::field::content_length].find(',') != boost::beast::string_view::npos) {
    return Refuse(400, "Content-Length: repeated");
  }
  std::vector<std::string_view> codings;
  for (auto [it, end] = head.equal_range(http::field::transfer_encoding); it != end; ++it) {
    SplitList(std::string_view(it->value().data(), it->value().size()), codings);
  }
  if (head.count(http::field::transfer_encoding) > 0) {
    if (version == 10) return Refuse(400, "Transfer-Encoding: not allowed in HTTP/1.0");
    if (codings.empty() || !EqualsIgnoreCase(codings.back(), "chunked")) {
      return Refuse(400, "Transfer-Encoding: chunked must be the final coding");
    }
    if (codings.size() > 1) return Refuse(400, "Transfer-Encoding: only chunked is supported");
  }
  const auto expect = head.find(http::field::expect);
  if (expect != head.end()) {
    if (!EqualsIgnoreCase(std::string_view(expect->value().data(), expect->value().size()),
                          "100-continue")) {
      return Refuse(417, "Expect: only 100-continue is supported");
    }
    // Also when the body has already arrived (the client did not wait): answering "100
    // Continue" then is allowed, and framing stays independent of how the bytes were cut.
    const bool body_follows =
        parser_->beast.chunked() || parser_->beast.content_length().value_or(0) > 0;
    if (version == 11 && body_follows) return Step::kExpectContinue;
  }
  return Step::kNeedMore;
}

Request RequestReader::TakeRequest() {
  keep_alive_ = parser_->beast.keep_alive();
  version_ = parser_->beast.get().version();
  http::request<http::string_body> message = parser_->beast.release();
  parser_.reset();
  head_checked_ = false;

  Request request;
  request.method = std::string(message.method_string());
  request.target = std::string(message.target());
  const std::size_t query = request.target.find('?');
  request.path = request.target.substr(0, query);
  if (query != std::string::npos) {
    request.params = ParseQueryString(std::string_view(request.target).substr(query + 1));
  }
  request.headers.reserve(static_cast<std::size_t>(std::distance(message.begin(), message.end())));
  for (const auto& field : message) {
    request.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  }
  request.body = std::move(message.body());
  return request;
}

}  // namespace settle::net
