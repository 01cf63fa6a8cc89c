#include "settle/engine/retry_policy.h"

#include <algorithm>
#include <random>

namespace settle::engine {

RetryPolicy::RetryPolicy(RetrySettings settings, Jitter jitter)
    : settings_(settings), jitter_(std::move(jitter)) {}

Duration RetryPolicy::Delay(Duration retry_interval, int consecutive_failures) const {
  const Duration cap = settings_.max_interval;
  const int doublings = consecutive_failures - 1;
  Duration base = std::max(retry_interval, Duration(1));
  // Double step by step so that a long failure streak cannot overflow.
  for (int i = 0; i < doublings && base < cap; ++i) base *= 2;
  base = std::min(base, cap);
  // Jitter spreads retries of many transactions that failed together; at the cap it may
  // only shorten the wait, so the cap holds.
  const auto jittered = Duration(static_cast<Duration::rep>(base.count() * jitter_()));
  return std::clamp(jittered, Duration(1), cap);
}

RetryPolicy::Jitter RetryPolicy::RandomJitter() {
  return [] {
    thread_local std::mt19937_64 rng{std::random_device{}()};
    thread_local std::uniform_real_distribution<double> factor(0.8, 1.2);
    return factor(rng);
  };
}

RetryPolicy::Jitter RetryPolicy::NoJitter() {
  return [] { return 1.0; };
}

}  // namespace settle::engine
