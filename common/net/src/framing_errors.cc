#include "framing_errors.h"

#include <boost/beast/http/error.hpp>

namespace settle::net {
namespace http = boost::beast::http;

FramingError DescribeRequestError(const boost::beast::error_code& ec, const RequestLimits& limits) {
  if (ec == http::error::header_limit) {
    return {431, "head: larger than " + std::to_string(limits.max_head_bytes) + " bytes"};
  }
  if (ec == http::error::body_limit) {
    return {413, "body: larger than " + std::to_string(limits.max_body_bytes) + " bytes"};
  }
  if (ec == http::error::bad_method) return {400, "request line: malformed method"};
  if (ec == http::error::bad_target) return {400, "request line: malformed target"};
  if (ec == http::error::bad_version) return {400, "request line: malformed HTTP version"};
  if (ec == http::error::bad_line_ending) return {400, "request: lines must end with CRLF"};
  if (ec == http::error::bad_field) return {400, "header: malformed field name"};
  if (ec == http::error::bad_value) return {400, "header: malformed field value"};
  if (ec == http::error::bad_obs_fold) {
    return {400, "header: obsolete line folding (a line starting with whitespace)"};
  }
  if (ec == http::error::bad_content_length) {
    return {400, "Content-Length: malformed, conflicting, or sent with Transfer-Encoding"};
  }
  if (ec == http::error::bad_transfer_encoding) {
    return {400, "Transfer-Encoding: repeated, or sent with Content-Length"};
  }
  if (ec == http::error::bad_chunk) return {400, "body: malformed chunk"};
  if (ec == http::error::bad_chunk_extension) return {400, "body: malformed chunk extension"};
  return {400, "request: " + ec.message()};
}

std::string DescribeResponseError(const boost::beast::error_code& ec) {
  if (ec == http::error::header_limit) return "its head is too large";
  if (ec == http::error::bad_status || ec == http::error::bad_version ||
      ec == http::error::bad_reason) {
    return "malformed status line";
  }
  if (ec == http::error::bad_chunk || ec == http::error::bad_chunk_extension) {
    return "malformed chunk";
  }
  if (ec == http::error::bad_content_length) return "malformed or conflicting Content-Length";
  if (ec == http::error::bad_transfer_encoding) return "malformed Transfer-Encoding";
  if (ec == http::error::partial_message) return "cut off before its end";
  return ec.message();
}

}  // namespace settle::net
