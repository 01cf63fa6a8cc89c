#pragma once

#include <chrono>
#include <string>

#include "child_process.h"

namespace settle::testing {

// The port from an example's "... listening on http://HOST:PORT" line; 0 if it printed none
// (it failed to start).
inline int ListeningPort(ChildProcess& process) {
  const std::string line = process.WaitForLine("listening on http://", std::chrono::seconds(20));
  const std::size_t colon = line.rfind(':');
  if (line.empty() || colon == std::string::npos) return 0;
  return std::stoi(line.substr(colon + 1));
}

}  // namespace settle::testing
