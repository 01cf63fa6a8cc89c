// The driver behind circuits per participant host, on a fake clock: a call an open circuit
// refuses is no attempt and no failure, only a due time that follows the circuit.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "coordinator_harness.h"

namespace settle::coordinator {
namespace {

using testing::CoordinatorHarness;

constexpr Duration kSecond{1000};

CircuitSettings TwoFailures() {
  CircuitSettings c;
  c.failures = 2;
  c.probe_initial = kSecond;
  c.probe_max = 4 * kSecond;
  return c;
}

SubmitRequest Saga(const std::string& gid) {
  SubmitRequest r{gid, TransType::kSaga, {}, {}};
  r.steps.push_back({"http://p/action", "http://p/compensate", R"({"amount":30})"});
  return r;
}

BranchOutcome Refused() { return {BranchResult::kUnknown, 0, "connection refused"}; }

const storage::BranchRecord& Action(const storage::Transaction& tx) {
  for (const auto& b : tx.branches) {
    if (b.op == BranchOp::kAction) return b;
  }
  FAIL("no action branch");
  return tx.branches.front();
}

int CallCount(CoordinatorHarness& h) { return static_cast<int>(h.caller().calls().size()); }

TEST_CASE(
    "sagas whose host's circuit is open are not called and count no failure: they wait for "
    "its probes, and resume when one succeeds",
    "[coordinator][circuit]") {
  CoordinatorHarness h(RetrySettings{Duration(60'000), 10}, {}, TwoFailures());
  // Two failed calls open the circuit, then three probes fail; the fourth succeeds.
  h.caller().Script("01", BranchOp::kAction, std::vector<BranchOutcome>(5, Refused()));
  const TimePoint t0 = h.clock().Now();
  for (const char* gid : {"g1", "g2", "g3", "g4"}) REQUIRE(h.coordinator().Submit(Saga(gid)).ok());
  CHECK(CallCount(h) == 2);

  // g3 and g4 were not called: no attempt, no failure, due at the probe, as stored.
  for (const char* gid : {"g3", "g4"}) {
    INFO(gid);
    const storage::Transaction tx = h.Load(gid);
    CHECK(Action(tx).attempts == 0);
    CHECK(Action(tx).failures == 0);
    CHECK(Action(tx).last_error.empty());
    CHECK(Action(tx).next_retry_at == t0 + kSecond);
    CHECK(tx.global.next_cron_time == t0 + kSecond);
    CHECK(h.scheduler().DueTime(gid) == t0 + kSecond);
  }

  // Probes at 1 s, then 2 s and 4 s (the cap) after each failed one; nothing in between.
  h.Advance(kSecond);
  CHECK(CallCount(h) == 3);
  h.Advance(kSecond);
  CHECK(CallCount(h) == 3);
  h.Advance(kSecond);
  CHECK(CallCount(h) == 4);
  h.Advance(2 * kSecond);
  CHECK(CallCount(h) == 4);
  h.Advance(2 * kSecond);
  CHECK(CallCount(h) == 5);

  // Failures are the calls made, nothing more; nobody is stuck.
  int failures = 0;
  for (const char* gid : {"g1", "g2", "g3", "g4"}) {
    const storage::Transaction tx = h.Load(gid);
    failures += Action(tx).failures;
    CHECK_FALSE(tx.global.stuck);
  }
  CHECK(failures == 5);
  CHECK(h.alerts().empty());

  // The next probe succeeds: the circuit closes and every waiting saga is driven at once.
  h.Advance(4 * kSecond);
  for (const char* gid : {"g1", "g2", "g3", "g4"}) {
    INFO(gid);
    CHECK(h.StatusOf(gid) == GlobalStatus::kSucceed);
  }
  CHECK(CallCount(h) == 9);
  CHECK(h.circuits().Circuits().at(0).state == CircuitState::kClosed);
}

TEST_CASE("a restart forgets circuits: waiting sagas keep their stored due times",
          "[coordinator][circuit]") {
  CoordinatorHarness h(RetrySettings{Duration(60'000), 10}, {}, TwoFailures());
  h.caller().Script("01", BranchOp::kAction, {Refused(), Refused()});
  const TimePoint t0 = h.clock().Now();
  for (const char* gid : {"g1", "g2", "g3"}) REQUIRE(h.coordinator().Submit(Saga(gid)).ok());
  REQUIRE(CallCount(h) == 2);
  h.Restart();
  CHECK(h.scheduler().DueTime("g3") == t0 + kSecond);
  CHECK(CallCount(h) == 2);
  // The new circuit is closed: each saga is called at its own due time (g2 failed twice).
  h.Advance(kSecond);
  CHECK(h.StatusOf("g1") == GlobalStatus::kSucceed);
  CHECK(h.StatusOf("g3") == GlobalStatus::kSucceed);
  CHECK(Action(h.Load("g3")).attempts == 1);
  h.Advance(kSecond);
  CHECK(h.StatusOf("g2") == GlobalStatus::kSucceed);
}

}  // namespace
}  // namespace settle::coordinator
