#include "settle/net/message.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "settle/core/ascii.h"
#include "settle/core/url.h"

namespace settle::net {

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return EqualsIgnoreAsciiCase(a, b);
}

const std::string* FindHeader(const Headers& headers, std::string_view name) {
  for (const auto& [field, value] : headers) {
    if (EqualsIgnoreCase(field, name)) return &value;
  }
  return nullptr;
}

std::multimap<std::string, std::string> ParseQueryString(std::string_view query) {
  std::multimap<std::string, std::string> params;
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    if (!pair.empty()) {
      const std::size_t eq = pair.find('=');
      params.emplace(FormDecode(pair.substr(0, eq)), eq == std::string_view::npos
                                                         ? std::string()
                                                         : FormDecode(pair.substr(eq + 1)));
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return params;
}

const char* ReasonPhrase(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 204:
      return "No Content";
    case 303:
      return "See Other";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 409:
      return "Conflict";
    case 413:
      return "Content Too Large";
    case 417:
      return "Expectation Failed";
    case 422:
      return "Unprocessable Content";
    case 425:
      return "Too Early";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Unknown";
  }
}

std::string DescribeAnswer(int status, std::string_view body) {
  constexpr std::size_t kBodyBytes = 200;
  std::string detail = "HTTP " + std::to_string(status);
  if (body.empty()) return detail;
  detail += ": ";
  for (unsigned char c : body.substr(0, kBodyBytes)) {
    detail += (c < 0x20 || c == 0x7f) ? ' ' : static_cast<char>(c);
  }
  if (body.size() > kBodyBytes) detail += "...";
  return detail;
}

std::string MessageBody(std::string_view text) {
  return nlohmann::json{{"message", text}}.dump(-1, ' ', false,
                                                nlohmann::json::error_handler_t::replace);
}

}  // namespace settle::net
