#include "settle/app/grpc_log.h"

#include <spdlog/spdlog.h>

#include <mutex>

#include "settle/grpc_listen/grpc_log_route.h"

namespace settle::app {
namespace {

std::mutex observer_mutex;
std::function<void(std::string_view)> observer;  // guarded by observer_mutex

std::string_view BaseName(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

void LogThroughSpdlog(const grpc_listen::GrpcLogLine& line) {
  if (const std::string_view reason = GrpcHandshakeFailure(line.file, line.message);
      !reason.empty()) {
    std::lock_guard lock(observer_mutex);
    if (observer) {
      observer(reason);
      return;
    }
  }
  using Severity = grpc_listen::GrpcLogLine::Severity;
  const spdlog::level::level_enum level = line.severity == Severity::kError  ? spdlog::level::err
                                          : line.severity == Severity::kInfo ? spdlog::level::info
                                                                             : spdlog::level::debug;
  spdlog::log(level, "grpc: {} ({}:{})", line.message, BaseName(line.file), line.line);
}

}  // namespace

std::string_view GrpcHandshakeFailure(std::string_view file, std::string_view message) {
  constexpr std::string_view kFailed = "Handshake failed";
  if (BaseName(file).rfind("ssl_transport_security", 0) != 0 || message.rfind(kFailed, 0) != 0) {
    return {};
  }
  // "... SSL_ERROR_SSL: error:0A000086:SSL routines::certificate verify failed." -> the last
  // part, OpenSSL's reason.
  std::string_view reason = message;
  if (const std::size_t colons = reason.rfind("::"); colons != std::string_view::npos) {
    reason = reason.substr(colons + 2);
  } else if (const std::size_t colon = reason.rfind(": "); colon != std::string_view::npos) {
    reason = reason.substr(colon + 2);
  }
  while (!reason.empty() && (reason.back() == '.' || reason.back() == ' ')) reason.remove_suffix(1);
  return reason.empty() ? message : reason;
}

void RouteGrpcLogs() { grpc_listen::RouteGrpcLogs(LogThroughSpdlog); }

void ObserveGrpcHandshakeFailures(std::function<void(std::string_view reason)> o) {
  std::lock_guard lock(observer_mutex);
  observer = std::move(o);
}

}  // namespace settle::app
