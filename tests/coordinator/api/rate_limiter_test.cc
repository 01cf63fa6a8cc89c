// RateLimiter on a fake clock: a caller's bucket, its refill, the wait it names, who shares a
// bucket, and the bound on the buckets kept.
#include "settle/api/rate_limiter.h"

#include <catch2/catch.hpp>

#include <string>

#include "fake_clock.h"

namespace settle::api {
namespace {

using settle::testing::FakeClock;
using std::chrono::milliseconds;

TEST_CASE("the --rate-limit flag reads RATE or RATE/BURST and names itself when it cannot",
          "[rate_limit]") {
  auto plain = RateLimit::Parse("100");
  REQUIRE(plain);
  CHECK(plain->per_second == 100);
  CHECK(plain->burst == 100);
  auto burst = RateLimit::Parse("10/50");
  REQUIRE(burst);
  CHECK(burst->per_second == 10);
  CHECK(burst->burst == 50);
  CHECK(burst->ToString() == "10/50");
  auto off = RateLimit::Parse("0");
  REQUIRE(off);
  CHECK_FALSE(off->enabled());
  for (const char* bad : {"", "x", "-1", "1.5", "10/", "10/0", "/5", "10/5/1"}) {
    INFO(bad);
    auto refused = RateLimit::Parse(bad);
    REQUIRE_FALSE(refused);
    CHECK_THAT(refused.status().message(), Catch::StartsWith("--rate-limit: "));
  }
}

TEST_CASE("a caller may make its burst at once, then the rate, and a refusal says how long to wait",
          "[rate_limit]") {
  FakeClock clock;
  RateLimiter limiter(clock, {.per_second = 10, .burst = 3});
  for (int i = 0; i < 3; ++i) CHECK_FALSE(limiter.Take("caller a", ApiPort::kHttp));
  const auto wait = limiter.Take("caller a", ApiPort::kHttp);
  REQUIRE(wait);
  CHECK(*wait == milliseconds(100));  // one token at 10 a second
  CHECK(RateLimiter::RetryAfterSeconds(*wait) == 1);
  CHECK_THAT(limiter.Message(*wait), Catch::Contains("quota: ") && Catch::Contains("--rate-limit"));
  CHECK(limiter.refused(ApiPort::kHttp) == 1);
  CHECK(limiter.refused(ApiPort::kGrpc) == 0);
  // Another caller has its own bucket.
  CHECK_FALSE(limiter.Take("caller b", ApiPort::kGrpc));
  // 99 ms later, still none; at 100 ms, one.
  clock.Advance(milliseconds(99));
  CHECK(limiter.Take("caller a", ApiPort::kGrpc));
  CHECK(limiter.refused(ApiPort::kGrpc) == 1);
  clock.Advance(milliseconds(1));
  CHECK_FALSE(limiter.Take("caller a", ApiPort::kHttp));
  CHECK(limiter.Take("caller a", ApiPort::kHttp));
  // A long quiet time refills up to the burst, never more.
  clock.Advance(std::chrono::hours(1));
  for (int i = 0; i < 3; ++i) CHECK_FALSE(limiter.Take("caller a", ApiPort::kHttp));
  CHECK(limiter.Take("caller a", ApiPort::kHttp));
}

TEST_CASE("without a limit every request goes on", "[rate_limit]") {
  FakeClock clock;
  RateLimiter limiter(clock, {});
  for (int i = 0; i < 10'000; ++i) REQUIRE_FALSE(limiter.Take("caller a", ApiPort::kHttp));
  CHECK(limiter.buckets() == 0);
}

TEST_CASE("the buckets kept are bounded: full ones are forgotten, new callers beyond share one",
          "[rate_limit]") {
  FakeClock clock;
  RateLimiter limiter(clock, {.per_second = 1, .burst = 2}, 100);
  // 100 addresses each spend their burst: 100 buckets, none full.
  for (int i = 0; i < 100; ++i) {
    const std::string key = "address 10.0.0." + std::to_string(i);
    CHECK_FALSE(limiter.Take(key, ApiPort::kHttp));
    CHECK_FALSE(limiter.Take(key, ApiPort::kHttp));
  }
  CHECK(limiter.buckets() == 100);
  // 1,000 more share the overflow bucket: its burst of 2, then refusals.
  int admitted = 0;
  for (int i = 0; i < 1000; ++i) {
    if (!limiter.Take("address 10.1.0." + std::to_string(i), ApiPort::kHttp)) ++admitted;
  }
  CHECK(admitted == 2);
  CHECK(limiter.buckets() == 101);
  // Once the first ones are full again (2 s) they are forgotten and new callers get their own.
  clock.Advance(std::chrono::seconds(2));
  CHECK_FALSE(limiter.Take("address 10.2.0.1", ApiPort::kHttp));
  CHECK_FALSE(limiter.Take("address 10.2.0.1", ApiPort::kHttp));
  CHECK(limiter.Take("address 10.2.0.1", ApiPort::kHttp));
  CHECK(limiter.buckets() <= 101);
}

TEST_CASE("a known caller is limited by its name, anyone else by its address", "[rate_limit]") {
  AccessTokens tokens;
  REQUIRE(tokens
              .AddFromText("client token-one-0123456789abcdef # orders\nclient "
                           "token-two-0123456789abcdef # orders\n")
              .ok());
  ClientCertificates certificates;
  const Authentication authentication(tokens, certificates);
  const std::string one = "Bearer token-one-0123456789abcdef";
  const std::string two = "Bearer token-two-0123456789abcdef";
  const std::string wrong = "Bearer nope-0123456789abcdef";
  // Two tokens of one name (a rotation) are one caller, wherever they come from.
  CHECK(RateLimiter::KeyOf(authentication, authentication.Identify(&one, ""), "10.0.0.1") ==
        RateLimiter::KeyOf(authentication, authentication.Identify(&two, ""), "10.0.0.2"));
  // An unknown token, or none, counts against its address.
  CHECK(RateLimiter::KeyOf(authentication, authentication.Identify(&wrong, ""), "10.0.0.1") ==
        "address 10.0.0.1");
  CHECK(RateLimiter::KeyOf(authentication, authentication.Identify(nullptr, ""), "10.0.0.3") ==
        "address 10.0.0.3");
  // Without authentication every request is "anonymous": its address tells callers apart.
  const AccessTokens none;
  const Authentication off(none, certificates);
  CHECK(RateLimiter::KeyOf(off, off.Identify(nullptr, ""), "10.0.0.4") == "address 10.0.0.4");
}

}  // namespace
}  // namespace settle::api
