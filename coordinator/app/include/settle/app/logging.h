#pragma once

#include <string>

namespace settle::app {

// Sends every log line to stderr with a timestamp (UTC) and level, at `level` and above
// (trace, debug, info, warn, error, critical, off), as `format` says ("text" or "json": see
// log_format.h), gRPC's own lines included (grpc_log.h). Lines are written by a background
// thread; warn and above are written before the call that logs them returns.
void ConfigureLogging(const std::string& level, const std::string& format = "text");

// Writes every pending line and stops the background thread; call before main returns.
void StopLogging();

}  // namespace settle::app
