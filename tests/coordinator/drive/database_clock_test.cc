// Several instances on one PostgreSQL database judge time by the database's clock: each reads it
// at every lease renewal (InstanceLease) into its DatabaseClock, on fake clocks set apart.
#include "settle/drive/database_clock.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <mutex>
#include <string>
#include <vector>

#include "eventually.h"
#include "fake_clock.h"
#include "fake_leases.h"
#include "settle/drive/instance_lease.h"

namespace settle::drive {
namespace {

using testing::FakeClock;
using testing::FakeLeases;
using namespace std::chrono_literals;

const ClockSkewSettings kSkew{Duration(1000), Duration(5000)};

TEST_CASE("an instance whose host clock is 30 s ahead stamps and compares the database's time",
          "[clock][skew]") {
  FakeClock host;
  DatabaseClock clock(host, kSkew);
  const TimePoint database = host.Now() - 30s;
  // Read between two monotonic readings 4 ms apart: taken as of their middle, 2 ms the error.
  const MonoTime sent = host.Monotonic();
  host.Advance(4ms);
  clock.Observe(database + 2ms, sent, host.Monotonic());

  CHECK(clock.Now() == database + 4ms);
  host.Advance(10s);
  CHECK(clock.Now() == database + 10004ms);
  const ClockReading r = clock.Reading();
  CHECK(r.reference == "database");
  CHECK(r.measured);
  CHECK(r.offset == -30s);
  CHECK(r.error == 2ms);
  CHECK(r.following == 0ms);
}

TEST_CASE(
    "a host clock beyond max-clock-skew stops the instance's claims, and they resume when it "
    "comes back",
    "[clock][skew]") {
  FakeClock host;
  DatabaseClock clock(host, kSkew);
  clock.Observe(host.Now() + 4s, host.Monotonic(), host.Monotonic());
  CHECK(clock.ClaimsAllowed());
  CHECK(clock.Reading().offset == 4s);

  host.Set(host.Now() - 2s);  // the host falls 6 s behind
  clock.Observe(host.Now() + 6s, host.Monotonic(), host.Monotonic());
  CHECK_FALSE(clock.ClaimsAllowed());
  CHECK_FALSE(clock.Reading().claiming);

  host.Set(host.Now() + 6s);  // NTP sets it right
  clock.Observe(host.Now(), host.Monotonic(), host.Monotonic());
  CHECK(clock.ClaimsAllowed());
  // Settled's clock never moved with the host's: it ran on the monotonic reading throughout.
  CHECK(clock.Reading().following == 0ms);
}

TEST_CASE("max-clock-skew 0 never stops claims", "[clock][skew]") {
  FakeClock host;
  DatabaseClock clock(host, {Duration(1000), Duration(0)});
  clock.Observe(host.Now() + 1h, host.Monotonic(), host.Monotonic());
  CHECK(clock.ClaimsAllowed());
  CHECK(clock.Now() == host.Now() + 1h);
}

// A lease whose database's clock the test sets apart from the instance's.
struct SkewedLease {
  explicit SkewedLease(Duration database_ahead) : database(host, kSkew) {
    leases.database_clock.Set(host.Now() + database_ahead);
    leases.claimable = {storage::DueEntry{"g1", host.Now()}};
    lease.SetDatabaseClock(&database);
  }
  // Starts the lease, and waits for its background thread's first round: a renewal, or a
  // reading of the database's clock when it stood down. Its next round is an hour away: the
  // test steps it with RunOnce().
  Status Start() {
    Status s = lease.Start([this](const std::string& gid, TimePoint) {
      std::lock_guard lock(mutex);
      scheduled.push_back(gid);
    });
    if (!s.ok()) return s;
    if (database.ClaimsAllowed()) {
      // Start's poll and the thread's.
      testing::Eventually([this] { return Scheduled().size() >= 2; }, std::chrono::seconds(10),
                          std::chrono::milliseconds(1));
    } else {
      REQUIRE(leases.WaitForClockReads(2));
    }
    return s;
  }
  std::vector<std::string> Scheduled() {
    std::lock_guard lock(mutex);
    return scheduled;
  }

  static constexpr Duration kHour{3'600'000};
  std::mutex mutex;
  std::vector<std::string> scheduled;  // guarded by mutex
  FakeClock host;
  DatabaseClock database;
  FakeLeases leases;
  InstanceLease lease{
      leases, database, {.instance_id = "i1", .lease = Duration(10'000), .poll = kHour}};
};

TEST_CASE("every lease renewal reads the database's clock", "[clock][skew][lease]") {
  SkewedLease s(-2s);
  REQUIRE(s.Start().ok());
  CHECK(s.database.Now() == s.host.Now() - 2s);
  CHECK(s.Scheduled() == std::vector<std::string>{"g1", "g1"});  // Start's poll, the thread's
  Result<bool> owned = s.lease.Claim("g1");
  CHECK((owned && *owned));
}

TEST_CASE(
    "an instance beyond max-clock-skew stops renewing its lease and claims and schedules nothing "
    "until its clock agrees again",
    "[clock][skew][lease]") {
  SkewedLease s(30s);
  REQUIRE(s.Start().ok());

  CHECK(s.Scheduled().empty());
  CHECK(s.leases.releases == 0);
  // A pass of a transaction this instance was asked about ends at once: the others drive it.
  Result<bool> refused = s.lease.Claim("g1");
  REQUIRE(refused);
  CHECK_FALSE(*refused);
  CHECK(s.leases.claims == 0);
  // Its clock is the database's all the same: what it stores through the API is on it.
  CHECK(s.database.Now() == s.host.Now() + 30s);

  // Not renewed: the lease runs out as one that lapsed, after the fence has cut the calls.
  s.host.Advance(Duration(9'000));
  s.leases.database_clock.Advance(Duration(9'000));
  s.lease.RunOnce();
  CHECK(s.lease.Remaining() <= Duration(0));
  CHECK(s.Scheduled().empty());

  s.host.Set(s.host.Now() + 30s);  // the host's clock is set right
  s.lease.RunOnce();               // reads the database's clock: within bounds again
  s.lease.RunOnce();               // renews and polls as before
  CHECK(s.Scheduled() == std::vector<std::string>{"g1"});
  CHECK(s.lease.Remaining() > Duration(0));
  Result<bool> owned = s.lease.Claim("g1");
  CHECK((owned && *owned));
}

}  // namespace
}  // namespace settle::drive
