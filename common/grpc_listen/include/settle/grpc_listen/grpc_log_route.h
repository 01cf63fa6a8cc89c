#pragma once

#include <functional>
#include <string_view>

namespace settle::grpc_listen {

// One line gRPC's library logged, as its gpr_log gives it.
struct GrpcLogLine {
  enum class Severity { kDebug, kInfo, kError };
  Severity severity = Severity::kError;
  std::string_view file;  // the gRPC source file that logged it
  int line = 0;
  std::string_view message;
};

// Sends every line gRPC's library logs (at the verbosity GRPC_VERBOSITY sets: errors by
// default) to `sink` instead of gRPC's own stderr format, for the whole process; null writes
// them to stderr, a line each ("grpc <file>:<line>] <message>"). `sink` is called on gRPC's
// threads, and must not call gRPC.
void RouteGrpcLogs(std::function<void(const GrpcLogLine&)> sink);

}  // namespace settle::grpc_listen
