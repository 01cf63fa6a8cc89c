#pragma once

#include <optional>
#include <stop_token>
#include <string>

#include "settle/common/clock.h"

namespace settle::coordinator {

struct PassResult {
  // When the transaction needs another pass; absent when it is finished or waits for the
  // client.
  std::optional<TimePoint> next_due;
};

// Moves one transaction forward as far as it can go now. The scheduler's view of a driver;
// tests substitute their own.
class PassRunner {
 public:
  virtual ~PassRunner() = default;
  // Never called twice at once for one gid. Returns early, with work left, once `stop` is
  // requested. Never throws.
  virtual PassResult RunPass(const std::string& gid, std::stop_token stop) = 0;
};

}  // namespace settle::coordinator
