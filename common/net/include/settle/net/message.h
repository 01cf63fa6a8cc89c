#pragma once

#include <any>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "settle/core/header_syntax.h"

namespace settle::net {

// Header fields in the order they were sent or are to be sent.
using Headers = std::vector<std::pair<std::string, std::string>>;

// ASCII case-insensitive equality, for header names and tokens.
bool EqualsIgnoreCase(std::string_view a, std::string_view b);

// The first value of the header `name` (compared without case), or nullptr.
const std::string* FindHeader(const Headers& headers, std::string_view name);

// One HTTP request as a server's handler sees it: framed, checked and complete.
struct Request {
  std::string method;
  std::string target;                              // as sent: path and query
  std::string path;                                // the target up to '?', as sent
  std::multimap<std::string, std::string> params;  // the query, percent- and '+'-decoded
  Headers headers;                                 // in order, as sent (trailers after them)
  std::string body;                                // de-chunked
  std::string remote_address;
  int remote_port = 0;
  // The subject of the certificate the client presented and the server verified (mutual TLS,
  // see TlsFiles::client_ca_file), as CertificateSubject renders it: "CN=order-service,O=Shop".
  // Empty over plain HTTP and when the client presented none.
  std::string peer_subject;
  // What the server's head judge (ServerOptions::judge_head) found of this request's head and
  // left for its handler, so that the handler need not judge it again (who sent it, say):
  // whatever type that judge and its handler agree on. Empty when no judge ran or it left
  // nothing; each request starts empty.
  std::any head_judgement;

  const std::string* Header(std::string_view name) const { return FindHeader(headers, name); }
};

// What a handler answers. Content-Length and Connection are the server's to write.
struct Response {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  // More header lines, written as given: names and values must be valid (no CR or LF).
  Headers headers = {};
};

// The query string's parameters, decoded as HTML forms encode them ('+' is a space). A
// malformed escape is kept as it is.
std::multimap<std::string, std::string> ParseQueryString(std::string_view query);

// "OK", "Not Found", ...; "Unknown" for a code without a standard reason.
const char* ReasonPhrase(int status);

// "HTTP 500: <start of body>" on one line, whatever the body holds ("..." when cut): an
// answer as error messages and last_error show it.
std::string DescribeAnswer(int status, std::string_view body);

// {"message": text}: the body of every answer the network layer makes up itself.
std::string MessageBody(std::string_view text);

}  // namespace settle::net
