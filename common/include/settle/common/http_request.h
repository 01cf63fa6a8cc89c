#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace settle {

// One HTTP request as a server handler sees it.
struct HttpRequest {
  std::string method;
  std::string target;  // as sent: path and query
  std::string path;    // the target up to '?', as sent
  std::multimap<std::string, std::string> params;  // the query, percent- and '+'-decoded
  std::vector<std::pair<std::string, std::string>> headers;  // in order, as sent
  std::string body;
  std::string remote_address;
  int remote_port = 0;

  // The first header of that name (compared without case), or nullptr.
  const std::string* Header(std::string_view name) const;
};

// What a handler answers. Content-Length and Connection are the server's to write.
struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  // More header lines, written as given: names and values must be valid (no CR or LF).
  std::vector<std::pair<std::string, std::string>> headers = {};
};

// The query string's parameters, decoded as HTML forms encode them ('+' is a space). A
// malformed escape is kept as it is.
std::multimap<std::string, std::string> ParseQueryString(std::string_view query);

// "OK", "Not Found", ...; "Unknown" for a code without a standard reason.
const char* HttpReasonPhrase(int status);

}  // namespace settle
