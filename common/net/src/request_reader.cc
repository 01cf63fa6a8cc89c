#include "settle/net/request_reader.h"

#include <algorithm>
#include <limits>

#include "framing_errors.h"
#include "message_parser.h"
#include "read_buffer.h"

namespace settle::net {

struct RequestReader::Parser {
  explicit Parser(const RequestLimits& limits)
      : beast({.max_fields = limits.max_fields,
               .max_trailer_bytes = limits.max_head_bytes,
               .keep_body = limits.max_body_bytes}) {
    // The head is handed over whole and measured here: Beast's own head limit would count a
    // head fed in pieces differently from one fed at once.
    beast.header_limit(std::numeric_limits<std::uint32_t>::max());
    beast.body_limit(limits.max_body_bytes);
    // Not eager until the head is checked: the parser stops after the head, so that nothing
    // of a body is taken before the head is known to be acceptable.
    beast.eager(false);
  }
  detail::MessageParser<true> beast;
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
  for (std::size_t lf = head.find('\n'); lf != std::string_view::npos;
       lf = head.find('\n', lf + 1)) {
    if (lf + 1 < head.size() && (head[lf + 1] == ' ' || head[lf + 1] == '\t')) return true;
  }
  return false;
}

bool IsTokenChar(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
}

// The request line, checked as soon as it is complete, before the rest of the head arrives:
// a client that sends garbage is answered at once, not when its head would have ended. Status
// 0 when the line is well-formed (Beast still parses it with the head).
FramingError CheckRequestLine(std::string_view line) {
  if (line.size() < 2 || line[line.size() - 2] != '\r') {
    return {400, "request: lines must end with CRLF"};
  }
  line.remove_suffix(2);
  const std::size_t first = line.find(' ');
  const std::size_t last = line.rfind(' ');
  if (first == std::string_view::npos || first == last) {
    return {400, "request line: not \"METHOD target HTTP/1.1\""};
  }
  const std::string_view method = line.substr(0, first);
  const std::string_view target = line.substr(first + 1, last - first - 1);
  const std::string_view version = line.substr(last + 1);
  if (method.empty() || !std::all_of(method.begin(), method.end(), [](char c) {
        return IsTokenChar(static_cast<unsigned char>(c));
      })) {
    return {400, "request line: malformed method"};
  }
  if (target.empty() || std::any_of(target.begin(), target.end(), [](char c) {
        const auto u = static_cast<unsigned char>(c);
        return u <= 0x20 || u == 0x7f;
      })) {
    return {400, "request line: malformed target"};
  }
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  if (version.size() != 8 || version.substr(0, 5) != "HTTP/" || !digit(version[5]) ||
      version[6] != '.' || !digit(version[7])) {
    return {400, "request line: malformed HTTP version"};
  }
  if (version != "HTTP/1.1" && version != "HTTP/1.0") {
    return {505, "request line: only HTTP/1.0 and HTTP/1.1 are served"};
  }
  return {0, {}};
}

}  // namespace

RequestReader::RequestReader(RequestLimits limits, bool report_heads)
    : limits_(limits),
      report_heads_(report_heads),
      buffer_(std::make_unique<detail::ReadBuffer>()) {}

RequestReader::~RequestReader() = default;

std::span<char> RequestReader::Prepare(std::size_t n) { return buffer_->Prepare(n); }
void RequestReader::Commit(std::size_t n) { buffer_->Commit(n); }
void RequestReader::Append(std::string_view bytes) { buffer_->Append(bytes); }

bool RequestReader::mid_request() const { return parser_ != nullptr || !buffer_->unread().empty(); }

RequestReader::Step RequestReader::Refuse(int status, std::string problem) {
  refusal_status_ = status;
  refusal_ = std::move(problem);
  return Step::kRefused;
}

RequestReader::Step RequestReader::Parse() {
  if (refusal_status_ != 0) return Step::kRefused;
  if (parser_ == nullptr) {
    buffer_->Consume(LeadingEmptyLines(buffer_->unread()));
    const std::string_view data = buffer_->unread();
    if (data.empty() || data == "\r") return Step::kNeedMore;
    const std::size_t line_end = data.find('\n');
    if (line_end != std::string_view::npos && line_end < limits_.max_head_bytes) {
      const FramingError line = CheckRequestLine(data.substr(0, line_end + 1));
      if (line.status != 0) return Refuse(line.status, line.problem);
    }
    // The whole head, or nothing: how the bytes were cut never changes what is accepted.
    const std::size_t head_end = detail::EndOfHead(data);
    if ((head_end == std::string_view::npos ? data.size() : head_end) > limits_.max_head_bytes) {
      return Refuse(431, "head: larger than " + std::to_string(limits_.max_head_bytes) + " bytes");
    }
    if (head_end == std::string_view::npos) return Step::kNeedMore;
    const std::string_view head = data.substr(0, head_end);
    if (HasObsFold(head)) {
      return Refuse(400, "header: obsolete line folding (a line starting with whitespace)");
    }
    parser_ = std::make_unique<Parser>(limits_);
    boost::beast::error_code ec;
    const std::size_t used = parser_->beast.put(boost::asio::buffer(head.data(), head.size()), ec);
    if (ec == boost::beast::http::error::need_more || (!ec && !parser_->beast.is_header_done())) {
      return Refuse(400, "request: lines must end with CRLF");
    }
    if (ec) {
      if (parser_->beast.refusal_status != 0) {
        return Refuse(parser_->beast.refusal_status, parser_->beast.refusal);
      }
      const FramingError error = DescribeRequestError(ec, limits_);
      return Refuse(error.status, error.problem);
    }
    buffer_->Consume(used);
    const Step checked = CheckHead();
    if (checked == Step::kRefused) return checked;
    parser_->beast.eager(true);
    TakeHead();
    if (report_heads_) {
      after_head_ = checked;
      return Step::kHead;
    }
    if (checked != Step::kNeedMore) return checked;
  } else if (after_head_) {
    const Step next = *after_head_;
    after_head_.reset();
    if (next != Step::kNeedMore) return next;
  }
  detail::MessageParser<true>& beast = parser_->beast;
  while (!beast.is_done()) {
    const std::string_view data = buffer_->unread();
    if (data.empty()) return Step::kNeedMore;
    boost::beast::error_code ec;
    const std::size_t used = detail::PutWindow(beast, data, limits_.max_head_bytes, ec);
    buffer_->Consume(used);
    if (ec == detail::kNeedsMore) return Step::kNeedMore;
    if (ec == detail::kLineTooLong) {
      return Refuse(400, "body: a chunk line or trailer longer than " +
                             std::to_string(limits_.max_head_bytes) + " bytes");
    }
    if (ec) {
      if (beast.refusal_status != 0) return Refuse(beast.refusal_status, beast.refusal);
      const FramingError error = DescribeRequestError(ec, limits_);
      return Refuse(error.status, error.problem);
    }
  }
  return Step::kRequest;
}

RequestReader::Step RequestReader::CheckHead() {
  const detail::MessageParser<true>& head = parser_->beast;
  if (head.version != 10 && head.version != 11) {
    return Refuse(505, "request line: only HTTP/1.0 and HTTP/1.1 are served");
  }
  if (head.target.empty() || head.target.front() != '/') {
    return Refuse(400, "request line: the target must be a path starting with '/'");
  }
  if (head.version == 11 && head.hosts == 0) return Refuse(400, "Host: missing");
  if (head.hosts > 1) return Refuse(400, "Host: more than one");
  if (head.content_lengths > 1) return Refuse(400, "Content-Length: repeated");
  if (head.transfer_encodings > 0) {
    if (head.version == 10) return Refuse(400, "Transfer-Encoding: not allowed in HTTP/1.0");
    if (head.transfer_codings.empty() ||
        !EqualsIgnoreCase(head.transfer_codings.back(), "chunked")) {
      return Refuse(400, "Transfer-Encoding: chunked must be the final coding");
    }
    if (head.transfer_codings.size() > 1) {
      return Refuse(400, "Transfer-Encoding: only chunked is supported");
    }
  }
  bool expects_continue = false;
  for (const std::string& expectation : head.expectations) {
    if (!EqualsIgnoreCase(expectation, "100-continue")) {
      return Refuse(417, "Expect: only 100-continue is supported");
    }
    expects_continue = true;
  }
  // Also when the body has already arrived (the client did not wait): answering "100
  // Continue" then is allowed, and framing stays independent of how the bytes were cut.
  const bool body_follows = head.chunked() || head.content_length().value_or(0) > 0;
  if (expects_continue && head.version == 11 && body_follows) return Step::kExpectContinue;
  return Step::kNeedMore;
}

void RequestReader::TakeHead() {
  detail::MessageParser<true>& parsed = parser_->beast;
  head_ = Request{};
  head_.method = std::move(parsed.method);
  head_.target = std::move(parsed.target);
  const std::size_t query = head_.target.find('?');
  head_.path = head_.target.substr(0, query);
  if (query != std::string::npos) {
    head_.params = ParseQueryString(std::string_view(head_.target).substr(query + 1));
  }
  head_.headers = std::move(parsed.headers);
}

Request RequestReader::TakeRequest() {
  detail::MessageParser<true>& parsed = parser_->beast;
  keep_alive_ = parsed.persistent();
  version_ = static_cast<unsigned>(parsed.version);

  Request request = std::move(head_);
  head_ = Request{};
  request.body = std::move(parsed.body);
  parser_.reset();
  after_head_.reset();
  return request;
}

}  // namespace settle::net
