#pragma once

#include <string>

namespace settle::coordinator {

// Sends every log line to stderr with a timestamp and level, at `level` and above
// (trace, debug, info, warn, error, critical, off).
void ConfigureLogging(const std::string& level);

}  // namespace settle::coordinator
