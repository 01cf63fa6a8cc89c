#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>

namespace settle::sdk {

// The options of docs/protocol.md §3.7 that a client may set on a transaction. Unset values are
// left to the coordinator's defaults.
struct TransOptions {
  // Submit and abort answer only after the coordinator's first pass over the transaction.
  bool wait_result = false;
  // TCC: aborted if still prepared this long after prepare. Saga: aborted and compensated if
  // its actions have not all succeeded this long after submit.
  std::optional<std::chrono::seconds> timeout_to_fail;
  std::optional<std::chrono::seconds> request_timeout;  // each branch call
  std::optional<std::chrono::seconds> retry_interval;   // before the first retry
  int retry_limit = 0;  // saga: attempts of an erroring action before the saga aborts; 0: none
  std::map<std::string, std::string> branch_headers;  // sent with every branch call
};

}  // namespace settle::sdk
