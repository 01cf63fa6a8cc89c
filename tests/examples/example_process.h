#pragma once

#include <signal.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>

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

// Waits for an example that a crash hook (--crash-before-commit, --crash-after-commit) makes
// kill itself, and checks that SIGKILL is what ended it.
inline void ExpectKilledBySigkill(ChildProcess& process) {
  const int status = process.Wait(std::chrono::seconds(30));
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGKILL);
}

}  // namespace settle::testing
