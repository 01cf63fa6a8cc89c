#pragma once

#include <functional>
#include <optional>

#include "settle/core/clock.h"

namespace settle::engine {

// Server-wide retry settings (per-transaction ones live in TransOptions).
struct RetrySettings {
  Duration max_interval{60'000};  // the cap of the doubling backoff
  int stuck_after = 10;           // consecutive failures of one branch that flag the transaction
  // Consecutive failures of one branch that pause (park) its transaction for an operator
  // (--pause-after; a transaction's custom_data "pause_after" overrides it); 0: never.
  int pause_after = 0;
};

// When a branch call that did not succeed is tried again (docs/protocol.md §4.6):
// after `retry_interval`, doubling per consecutive failure, with +-20% jitter, never above
// the cap. ONGOING keeps the interval instead of doubling it. Retries never stop by
// themselves; a branch that has failed `stuck_after` times in a row is stuck.
//
// Thread-safe if the jitter source is (the default one is).
class RetryPolicy {
 public:
  // A source of jitter factors, uniformly in [0.8, 1.2].
  using Jitter = std::function<double()>;

  explicit RetryPolicy(RetrySettings settings, Jitter jitter = RandomJitter());

  // The wait before the next call of a branch that has failed `consecutive_failures` times in
  // a row: `retry_interval` for 0 or 1, doubled for each further failure, capped, jittered.
  // After a failure, pass the count including it; after ONGOING (not a failure), the
  // unchanged count, so the interval stays what it was.
  Duration Delay(Duration retry_interval, int consecutive_failures) const;

  bool IsStuck(int consecutive_failures) const {
    return consecutive_failures >= settings_.stuck_after;
  }
  // Whether a branch that has failed `consecutive_failures` times in a row parks its
  // transaction: `own_limit` is the transaction's pause_after, if it has one.
  bool ParksAfter(int consecutive_failures, std::optional<int> own_limit) const {
    const int limit = own_limit.value_or(settings_.pause_after);
    return limit > 0 && consecutive_failures >= limit;
  }

  const RetrySettings& settings() const { return settings_; }

  static Jitter RandomJitter();
  static Jitter NoJitter();

 private:
  RetrySettings settings_;
  Jitter jitter_;
};

}  // namespace settle::engine
