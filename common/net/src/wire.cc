#include "wire.h"

namespace settle::net {
namespace {

bool IsFramingHeader(std::string_view name) {
  return EqualsIgnoreCase(name, "Content-Length") || EqualsIgnoreCase(name, "Transfer-Encoding") ||
         EqualsIgnoreCase(name, "Connection");
}

}  // namespace

std::string ResponseHead(const Response& response, bool close, bool keep_alive_header) {
  std::string head;
  head.reserve(160);
  head += "HTTP/1.1 ";
  head += std::to_string(response.status);
  head += ' ';
  head += ReasonPhrase(response.status);
  head += "\r\nContent-Type: ";
  head += response.content_type;
  head += "\r\nContent-Length: ";
  head += std::to_string(response.body.size());
  head += "\r\n";
  for (const auto& [name, value] : response.headers) {
    if (!IsValidHeaderName(name) || !IsValidHeaderValue(value) || IsFramingHeader(name)) continue;
    head += name;
    head += ": ";
    head += value;
    head += "\r\n";
  }
  if (close) {
    head += "Connection: close\r\n";
  } else if (keep_alive_header) {
    head += "Connection: keep-alive\r\n";
  }
  head += "\r\n";
  return head;
}

Result<std::string> RequestHead(std::string_view method, std::string_view target, const Url& url,
                                const Headers& headers, std::size_t body_size) {
  std::string head;
  head.reserve(256 + target.size());
  head += method;
  head += ' ';
  // The request line is written as given, so bytes that may not appear in it raw are encoded
  // here. ParseUrl has already refused spaces and control characters.
  head += PercentEncodeNonAscii(target);
  head += " HTTP/1.1\r\n";
  bool own_host = true;
  bool own_content_type = true;
  for (const auto& [name, value] : headers) {
    if (!IsValidHeaderName(name) || !IsValidHeaderValue(value)) {
      return Status::InvalidArgument("header '" + name + "': invalid name or value");
    }
    if (IsFramingHeader(name)) continue;
    if (EqualsIgnoreCase(name, "Host")) own_host = false;
    if (EqualsIgnoreCase(name, "Content-Type")) own_content_type = false;
    head += name;
    head += ": ";
    head += value;
    head += "\r\n";
  }
  if (own_host) {
    head += "Host: ";
    head += url.HostPort();
    head += "\r\n";
  }
  if (own_content_type) head += "Content-Type: application/json\r\n";
  if (body_size > 0 || method == "POST" || method == "PUT") {
    head += "Content-Length: ";
    head += std::to_string(body_size);
    head += "\r\n";
  }
  head += "\r\n";
  return head;
}

}  // namespace settle::net
