#pragma once

#include <functional>
#include <string_view>

namespace settle::app {

// gRPC's library writes its own lines to stderr (E1127 ... file.cc:123] ...), in a format of
// its own, without a rate limit. RouteGrpcLogs sends them through spdlog instead, as settled's
// other lines (the format, the level, the escaping of control bytes): "grpc: <message>
// (<file>:<line>)" at debug, info or error as gRPC rated it. A failed TLS handshake of a gRPC
// server (ssl_transport_security.cc's "Handshake failed ...") is handed to the observer set by
// ObserveGrpcHandshakeFailures instead, which counts and rate-limits it; gRPC (1.51) does not
// say which peer it was.
//
// Both are process-wide: gRPC's log function is one for the whole process (gpr_set_log_function),
// so the route and the one observer serve every gRPC server and channel in it. That is right for
// settled, which runs one gRPC server per process; a process with several would count all their
// handshake failures in one observer.
//
// Thread-safety: gRPC calls the route from any of its threads; set the observer before gRPC
// serves and clear it (nullptr) before what it refers to is destroyed.
void RouteGrpcLogs();
void ObserveGrpcHandshakeFailures(std::function<void(std::string_view reason)> observer);

// Whether a line gRPC logged at `file` says a TLS handshake failed, and its reason then
// ("certificate verify failed" of "Handshake failed with fatal error SSL_ERROR_SSL:
// error:0A000086:SSL routines::certificate verify failed."); empty otherwise.
std::string_view GrpcHandshakeFailure(std::string_view file, std::string_view message);

}  // namespace settle::app
