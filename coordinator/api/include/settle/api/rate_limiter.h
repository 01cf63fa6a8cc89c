#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "settle/api/authentication.h"
#include "settle/api/refusal_log.h"
#include "settle/core/clock.h"
#include "settle/core/status.h"

namespace settle::api {

// --rate-limit: requests a second one caller may make on settled's APIs, HTTP and gRPC
// together, and how many it may make at once after a quiet time (docs/operations.md, "Hostile
// clients"). 0 requests a second: no limit.
struct RateLimit {
  double per_second = 0;
  double burst = 0;  // 0 with a rate: as many as one second's
  bool enabled() const { return per_second > 0; }
  // "RATE" or "RATE/BURST" (whole numbers; "0": off). InvalidArgument naming the flag.
  static Result<RateLimit> Parse(const std::string& text);
  std::string ToString() const;
};

// A token bucket per caller (docs/operations.md, "Hostile clients"): a request takes one token,
// the bucket refills at `per_second` up to `burst`, and a request finding it empty is refused
// with the time until a token comes back. The caller is api::Caller::name when authentication
// is on and the request's token, session or certificate is known (several tokens of one name
// share a bucket), and else the peer's address, so that neither anonymous clients nor a bad
// token escape the limit.
//
// At most `max_buckets` are kept: a full bucket is as good as none and is forgotten when room
// is needed; past that, new callers share one bucket ("other") until room comes back, so a
// client changing addresses cannot grow the table.
//
// Time is read from `clock`'s monotonic reading. Thread-safe.
class RateLimiter {
 public:
  static constexpr std::size_t kDefaultMaxBuckets = 10'000;
  static constexpr const char* kFlag = "--rate-limit";

  RateLimiter(const Clock& clock, RateLimit limit, std::size_t max_buckets = kDefaultMaxBuckets);

  bool enabled() const { return limit_.enabled(); }
  const RateLimit& limit() const { return limit_; }

  // The bucket a request counts against (see above).
  static std::string KeyOf(const Authentication& authentication,
                           const Authentication::Identified& identified,
                           const std::string& peer_address);

  // Takes a token of `key`'s bucket: nullopt when the request may go on, else how long until
  // the bucket has a token again (at least 1 ms). Counted by `port` when refused.
  std::optional<Duration> Take(const std::string& key, ApiPort port);

  // {"message":"quota: ..."}'s text for a refusal that must wait `retry_after`.
  std::string Message(Duration retry_after) const;
  // Whole seconds a client should wait (Retry-After), at least 1.
  static std::int64_t RetryAfterSeconds(Duration retry_after);

  std::uint64_t refused(ApiPort port) const;
  std::size_t buckets() const;

 private:
  struct Bucket {
    double tokens = 0;
    MonoTime at{0};
  };
  // Refills `bucket` to now.
  void Refill(Bucket& bucket, MonoTime now) const;
  // Forgets the full buckets. Under mu_.
  void ForgetFull(MonoTime now);

  const Clock& clock_;
  const RateLimit limit_;
  const std::size_t max_buckets_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Bucket> buckets_;
  static constexpr MonoTime kSweepEvery = std::chrono::seconds(1);
  bool swept_ = false;
  MonoTime last_sweep_{0};
  Bucket overflow_;
  bool overflow_started_ = false;
  std::uint64_t refused_[2] = {0, 0};  // by ApiPort
};

}  // namespace settle::api
