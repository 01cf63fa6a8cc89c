#pragma once

#include <optional>
#include <stop_token>
#include <string>

#include "settle/async/asio.h"
#include "settle/core/clock.h"
#include "settle/storage/records.h"

namespace settle::drive {

struct PassResult {
  // When the transaction needs another pass; absent when it is finished or waits for the
  // client.
  std::optional<TimePoint> next_due;
  // The transaction exactly as stored when the pass returned, if the pass knows it (it is
  // absent after a refused write or a failed read): wait_result answers from it instead of
  // reading the transaction again.
  std::optional<storage::Transaction> final_state;
  // The pass ended because a participant host's gate held a call: the gate wakes the
  // transaction (Scheduler::Schedule), so finding it due in storage does not run it again
  // (Scheduler::ScheduleFound).
  bool held = false;
};

// Moves one transaction forward as far as it can go now. The scheduler's view of a driver;
// tests substitute their own.
class PassRunner {
 public:
  virtual ~PassRunner() = default;
  // A coroutine on an I/O thread: it awaits the store and branch calls, never blocks. Never
  // called twice at once for one gid. Starts from `stored` when given (the transaction as
  // stored, which no pass has changed since; its global id may be 0), otherwise reads it.
  // Returns early, with work left, once `stop` is requested. Never throws.
  virtual asio::awaitable<PassResult> RunPass(std::string gid,
                                              std::optional<storage::Transaction> stored,
                                              std::stop_token stop) = 0;
};

}  // namespace settle::drive
