#include "settle/api/rate_limiter.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <iterator>

namespace settle::api {
namespace {

Result<double> WholeNumber(std::string_view text, const char* what) {
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() ||
      value > 1'000'000'000) {
    return Status::InvalidArgument(std::string(RateLimiter::kFlag) + ": " + what +
                                   " must be a whole number from 0 to 1000000000 (RATE or "
                                   "RATE/BURST, e.g. 100/200)");
  }
  return static_cast<double>(value);
}

}  // namespace

Result<RateLimit> RateLimit::Parse(const std::string& text) {
  const std::size_t slash = text.find('/');
  auto rate = WholeNumber(std::string_view(text).substr(0, slash), "RATE");
  if (!rate) return rate.status();
  RateLimit limit{.per_second = *rate, .burst = *rate};
  if (slash != std::string::npos) {
    auto burst = WholeNumber(std::string_view(text).substr(slash + 1), "BURST");
    if (!burst) return burst.status();
    if (*burst < 1 && *rate > 0) {
      return Status::InvalidArgument(std::string(RateLimiter::kFlag) +
                                     ": BURST must be at least 1 with a RATE");
    }
    limit.burst = *burst;
  }
  return limit;
}

std::string RateLimit::ToString() const {
  if (!enabled()) return "0";
  return std::to_string(static_cast<std::uint64_t>(per_second)) + "/" +
         std::to_string(static_cast<std::uint64_t>(burst));
}

RateLimiter::RateLimiter(const Clock& clock, RateLimit limit, std::size_t max_buckets)
    : clock_(clock),
      limit_{limit.per_second, limit.burst > 0 ? limit.burst : limit.per_second},
      max_buckets_(std::max<std::size_t>(max_buckets, 1)) {}

std::string RateLimiter::KeyOf(const Authentication& authentication,
                               const Authentication::Identified& identified,
                               const std::string& peer_address) {
  // Without authentication every request is "anonymous": only its address tells callers apart.
  if (authentication.enabled() && identified.caller.access != Access::kNone) {
    return "caller " + identified.caller.name;
  }
  return "address " + peer_address;
}

void RateLimiter::Refill(Bucket& bucket, MonoTime now) const {
  const double seconds = std::chrono::duration<double>(now - bucket.at).count();
  if (seconds > 0) {
    bucket.tokens = std::min(limit_.burst, bucket.tokens + seconds * limit_.per_second);
  }
  bucket.at = std::max(bucket.at, now);
}

void RateLimiter::ForgetFull(MonoTime now) {
  for (auto it = buckets_.begin(); it != buckets_.end();) {
    Refill(it->second, now);
    it = it->second.tokens >= limit_.burst ? buckets_.erase(it) : std::next(it);
  }
}

std::optional<Duration> RateLimiter::Take(const std::string& key, ApiPort port) {
  if (!enabled()) return std::nullopt;
  const MonoTime now = clock_.Monotonic();
  const std::lock_guard lock(mu_);
  Bucket* bucket = nullptr;
  if (auto it = buckets_.find(key); it != buckets_.end()) {
    bucket = &it->second;
  } else {
    // At most one sweep a second, so that a flood of new callers does not scan the table for
    // each.
    if (buckets_.size() >= max_buckets_ && (!swept_ || now - last_sweep_ >= kSweepEvery)) {
      ForgetFull(now);
      swept_ = true;
      last_sweep_ = now;
    }
    if (buckets_.size() < max_buckets_) {
      bucket = &buckets_.emplace(key, Bucket{limit_.burst, now}).first->second;
    } else {
      if (!overflow_started_) overflow_ = Bucket{limit_.burst, now};
      overflow_started_ = true;
      bucket = &overflow_;
    }
  }
  Refill(*bucket, now);
  if (bucket->tokens >= 1) {
    bucket->tokens -= 1;
    return std::nullopt;
  }
  ++refused_[port == ApiPort::kHttp ? 0 : 1];
  const double seconds = (1 - bucket->tokens) / limit_.per_second;
  const auto wait = std::chrono::duration_cast<Duration>(std::chrono::duration<double>(seconds));
  return std::max(wait, Duration(1));
}

std::string RateLimiter::Message(Duration retry_after) const {
  return "quota: more than " + std::to_string(static_cast<std::uint64_t>(limit_.per_second)) +
         " requests a second (burst " + std::to_string(static_cast<std::uint64_t>(limit_.burst)) +
         ") from this caller (" + kFlag + "); retry in " + std::to_string(retry_after.count()) +
         " ms";
}

std::int64_t RateLimiter::RetryAfterSeconds(Duration retry_after) {
  return std::max<std::int64_t>(1, (retry_after.count() + 999) / 1000);
}

std::uint64_t RateLimiter::refused(ApiPort port) const {
  const std::lock_guard lock(mu_);
  return refused_[port == ApiPort::kHttp ? 0 : 1];
}

std::size_t RateLimiter::buckets() const {
  const std::lock_guard lock(mu_);
  return buckets_.size() + (overflow_started_ ? 1 : 0);
}

}  // namespace settle::api
