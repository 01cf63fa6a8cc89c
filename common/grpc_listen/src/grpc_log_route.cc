#include "settle/grpc_listen/grpc_log_route.h"

#include <grpc/support/log.h>

#include <cstdio>
#include <memory>
#include <mutex>

namespace settle::grpc_listen {
namespace {

std::mutex sink_mutex;
std::shared_ptr<const std::function<void(const GrpcLogLine&)>> sink;  // guarded by sink_mutex

void Route(gpr_log_func_args* args) {
  std::shared_ptr<const std::function<void(const GrpcLogLine&)>> to;
  {
    std::lock_guard lock(sink_mutex);
    to = sink;
  }
  GrpcLogLine line;
  line.severity = args->severity == GPR_LOG_SEVERITY_ERROR  ? GrpcLogLine::Severity::kError
                  : args->severity == GPR_LOG_SEVERITY_INFO ? GrpcLogLine::Severity::kInfo
                                                            : GrpcLogLine::Severity::kDebug;
  line.file = args->file != nullptr ? args->file : "";
  line.line = args->line;
  line.message = args->message != nullptr ? args->message : "";
  if (to != nullptr) {
    (*to)(line);
  } else {
    std::fprintf(stderr, "grpc %.*s:%d] %.*s\n", static_cast<int>(line.file.size()),
                 line.file.data(), line.line, static_cast<int>(line.message.size()),
                 line.message.data());
  }
}

}  // namespace

void RouteGrpcLogs(std::function<void(const GrpcLogLine&)> to) {
  const bool routed = static_cast<bool>(to);  // null: to stderr, one line each
  {
    std::lock_guard lock(sink_mutex);
    sink = routed ? std::make_shared<const std::function<void(const GrpcLogLine&)>>(std::move(to))
                  : nullptr;
  }
  gpr_set_log_function(Route);
}

}  // namespace settle::grpc_listen
