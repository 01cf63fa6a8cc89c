#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace settle::notify {

struct SendOptions {
  std::string coordinator;  // settled's API base
  std::string to;           // the receiver's URL, e.g. http://127.0.0.1:8084/api/notify
  std::string text;
  std::string gid;  // empty: a new one from the coordinator
  int retry_limit = 3;
  std::optional<std::chrono::seconds> retry_interval;  // empty: settled's --retry-interval
  std::chrono::seconds wait{0};  // how long to watch the outcome (0: just submit)
};

// Submits a message of one step, POST `to` {"text":...}, with no local transaction (no
// prepare): settled delivers it until the receiver accepts it or `retry_limit` deliveries have
// failed, and then fails it and raises its alert (transaction_gave_up). Prints
// "notification GID: submitted", and with `wait` the outcome ("succeed", or "failed: REASON").
// Returns the exit code: 0 delivered (or submitted, without `wait`), 1 failed or still going
// when `wait` ran out, 2 when the coordinator is unreachable or refuses the message.
int Send(const SendOptions& options);

}  // namespace settle::notify
