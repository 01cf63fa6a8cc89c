#include "settle/core/log_rate_limiter.h"

#include <algorithm>

namespace settle {

LogRateLimiter::LogRateLimiter(const Clock& clock, std::size_t kinds, Options options)
    : clock_(clock),
      options_{std::max<std::size_t>(options.lines, 1), options.window},
      windows_(kinds) {}

std::uint64_t LogRateLimiter::CloseIfEnded(Window& window, MonoTime now) const {
  if (!window.open || now - window.opened < options_.window) return 0;
  const std::uint64_t suppressed = window.suppressed;
  window = Window{};
  return suppressed;
}

LogRateLimiter::Verdict LogRateLimiter::Admit(std::size_t kind) {
  Window& window = windows_.at(kind);
  const MonoTime now = clock_.Monotonic();
  Verdict verdict;
  verdict.suppressed = CloseIfEnded(window, now);
  if (!window.open) {
    window.open = true;
    window.opened = now;
  }
  if (window.logged < options_.lines) {
    ++window.logged;
    verdict.log = true;
    verdict.last = window.logged == options_.lines;
  } else {
    ++window.suppressed;
  }
  return verdict;
}

std::vector<LogRateLimiter::Ended> LogRateLimiter::TakeEnded() {
  const MonoTime now = clock_.Monotonic();
  std::vector<Ended> ended;
  for (std::size_t kind = 0; kind < windows_.size(); ++kind) {
    if (const std::uint64_t suppressed = CloseIfEnded(windows_[kind], now); suppressed > 0) {
      ended.push_back({kind, suppressed});
    }
  }
  return ended;
}

}  // namespace settle
