#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "settle/core/status.h"
#include "settle/core/url.h"
#include "settle/net/message.h"

// The heads the network layer writes: the one place where a status line, a Host header or the
// framing headers are put together.
namespace settle::net {

// "HTTP/1.1 <status> <reason>", Content-Type, Content-Length, the response's own headers (an
// invalid one is left out), and "Connection: close" or, for an HTTP/1.0 client kept alive,
// "Connection: keep-alive"; ends with the blank line.
std::string ResponseHead(const Response& response, bool close, bool keep_alive_header);

// The request line and headers for `url`, ending with the blank line: the caller's headers
// (which may replace Host and Content-Type, but not Content-Length, Transfer-Encoding or
// Connection: those belong to the connection), then Host, Content-Type: application/json and
// Content-Length when a body follows (or the method is POST or PUT). InvalidArgument naming a
// header whose name or value could not be sent as it is.
Result<std::string> RequestHead(std::string_view method, std::string_view target, const Url& url,
                                const Headers& headers, std::size_t body_size);

}  // namespace settle::net
