#pragma once

#include <string>
#include <vector>

namespace settle::testing {

// What one settle-check run printed and how it ended.
struct CheckRun {
  int exit_code = -1;
  std::string out;
  std::string err;

  // The stdout line about check `name` ("PASS  empty rollback: ..."), or "".
  std::string Line(const std::string& name) const;
  // "PASS", "FAIL" or "UNVERIFIED" for check `name`, or "" when it has no line.
  std::string Verdict(const std::string& name) const;
};

// Runs the settle-check binary (SETTLE_CHECK_BINARY) with `args` to its end; it bounds every
// request with its own timeout.
CheckRun RunSettleCheck(const std::vector<std::string>& args);

}  // namespace settle::testing
