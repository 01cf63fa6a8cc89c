#include "settle/api/session_store.h"

#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "fake_clock.h"

namespace settle::api {
namespace {

using testing::FakeClock;
using namespace std::chrono_literals;

TEST_CASE("a console session id is 32 random bytes in base64url, and finds its caller",
          "[auth][session]") {
  FakeClock clock;
  SessionStore sessions(clock);
  std::set<std::string> ids;
  for (int i = 0; i < 100; ++i) {
    Result<std::string> id = sessions.Create(Caller{Access::kAdmin, "on-call"});
    REQUIRE(id.ok());
    REQUIRE(id->size() == 43);  // 32 bytes, no padding
    for (char c : *id)
      REQUIRE((std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'));
    ids.insert(*id);
  }
  CHECK(ids.size() == 100);
  const std::optional<Caller> found = sessions.Find(*ids.begin());
  REQUIRE(found.has_value());
  CHECK(found->access == Access::kAdmin);
  CHECK(found->name == "on-call");
}

TEST_CASE("an unknown, altered or empty session id finds nothing", "[auth][session]") {
  FakeClock clock;
  SessionStore sessions(clock);
  std::string id = *sessions.Create(Caller{Access::kRead, "Prometheus"});
  CHECK_FALSE(sessions.Find("").has_value());
  CHECK_FALSE(sessions.Find("not-a-session").has_value());
  id.back() = id.back() == 'A' ? 'B' : 'A';
  CHECK_FALSE(sessions.Find(id).has_value());
}

TEST_CASE("a session grants until its lifetime has passed, and not after", "[auth][session]") {
  FakeClock clock;
  SessionStore sessions(clock, {.lifetime = Duration(3'600'000), .max_sessions = 10});
  const std::string id = *sessions.Create(Caller{Access::kClient, "ci"});
  clock.Advance(3'599'999ms);
  CHECK(sessions.Find(id).has_value());
  clock.Advance(1ms);
  CHECK_FALSE(sessions.Find(id).has_value());
  // Setting the wall clock back does not revive it: lifetimes run on the monotonic reading.
  clock.Set(clock.Now() - 24h);
  CHECK_FALSE(sessions.Find(id).has_value());
}

TEST_CASE("signing out ends a session, and only that one", "[auth][session]") {
  FakeClock clock;
  SessionStore sessions(clock);
  const std::string mine = *sessions.Create(Caller{Access::kAdmin, "on-call"});
  const std::string yours = *sessions.Create(Caller{Access::kRead, "Prometheus"});
  sessions.Remove(mine);
  sessions.Remove("no-such-session");
  CHECK_FALSE(sessions.Find(mine).has_value());
  CHECK(sessions.Find(yours).has_value());
  CHECK(sessions.size() == 1);
}

TEST_CASE("past max_sessions the oldest session is dropped, and expired ones first",
          "[auth][session]") {
  FakeClock clock;
  SessionStore sessions(clock, {.lifetime = Duration(60'000), .max_sessions = 3});
  const std::string first = *sessions.Create(Caller{Access::kRead, "a"});
  clock.Advance(1ms);
  const std::string second = *sessions.Create(Caller{Access::kRead, "b"});
  clock.Advance(1ms);
  const std::string third = *sessions.Create(Caller{Access::kRead, "c"});
  clock.Advance(1ms);
  const std::string fourth = *sessions.Create(Caller{Access::kRead, "d"});
  CHECK(sessions.size() == 3);
  CHECK_FALSE(sessions.Find(first).has_value());
  CHECK(sessions.Find(second).has_value());
  CHECK(sessions.Find(fourth).has_value());
  // Once they have expired, a new session takes their room without dropping a live one.
  clock.Advance(60'000ms);
  const std::string fifth = *sessions.Create(Caller{Access::kRead, "e"});
  CHECK(sessions.size() == 1);
  CHECK(sessions.Find(fifth).has_value());
  CHECK_FALSE(sessions.Find(third).has_value());
}

}  // namespace
}  // namespace settle::api
