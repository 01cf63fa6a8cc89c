#pragma once

#include <sys/types.h>

#include <fstream>
#include <string>

namespace settle::testing {

// A process's resident memory in KiB, as /proc/<pid>/status's VmRSS says: what the hostile
// clients' tests bound (a process's memory under attack, and after it). 0 when it cannot be
// read (the process is gone).
inline long ResidentKiB(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return 0;
}

}  // namespace settle::testing
