#pragma once

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>

#include "eventually.h"

namespace settle::testing {

// The whole file's text; "" when it cannot be read.
inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Polls the file (a process's log, say) until it contains `text`, or until `deadline`.
inline bool WaitForFileToContain(const std::string& path, const std::string& text,
                                 std::chrono::steady_clock::time_point deadline) {
  return Eventually(
      [&] { return ReadFile(path).find(text) != std::string::npos; },
      std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()),
      std::chrono::milliseconds(20));
}

}  // namespace settle::testing
