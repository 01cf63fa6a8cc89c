// The driver behind a gate per participant host, on a fake clock: a call the gate holds is no
// attempt, no failure and no write; the transaction waits in the gate until it is woken (for
// a probe, or released when the circuit closes, at the release rate).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "coordinator_harness.h"

namespace settle::drive {
namespace {

using testing::CoordinatorHarness;

constexpr Duration kSecond{1000};

engine::HostGateSettings TwoFailures(int release_per_second = 0) {
  engine::HostGateSettings g;
  g.circuit.failures = 2;
  g.circuit.probe_initial = kSecond;
  g.circuit.probe_max = 4 * kSecond;
  g.max_in_flight = 0;
  g.release_per_second = release_per_second;
  return g;
}

engine::SubmitRequest Saga(const std::string& gid) {
  engine::SubmitRequest r{gid, TransType::kSaga, {}, {}};
  r.steps.push_back({"http://p/action", "http://p/compensate"});
  r.payloads.push_back(R"({"amount":30})");
  return r;
}

engine::BranchOutcome Refused() { return {BranchResult::kUnknown, 0, "connection refused"}; }

const storage::BranchRecord& Action(const storage::Transaction& tx) {
  for (const auto& b : tx.branches) {
    if (b.op == BranchOp::kAction) return b;
  }
  FAIL("no action branch");
  return tx.branches.front();
}

int CallCount(CoordinatorHarness& h) { return static_cast<int>(h.caller().calls().size()); }

TEST_CASE(
    "sagas whose host's circuit is open are not called, count no failure and show as stuck "
    "without an alert: they wait for its probes, and resume when one succeeds",
    "[coordinator][circuit]") {
  CoordinatorHarness h(engine::RetrySettings{Duration(60'000), 10}, {}, TwoFailures());
  // Two failed calls open the circuit, then three probes fail; the fourth succeeds.
  h.caller().Script("01", BranchOp::kAction, std::vector<engine::BranchOutcome>(5, Refused()));
  const TimePoint t0 = h.clock().Now();
  for (const char* gid : {"g1", "g2", "g3", "g4"}) REQUIRE(h.coordinator().Submit(Saga(gid)).ok());
  CHECK(CallCount(h) == 2);

  // g3 and g4 were not called: no attempt, no failure, and still due as stored (a restart
  // calls them at once); in memory they wait for the gate, looking again only after the hold.
  for (const char* gid : {"g3", "g4"}) {
    INFO(gid);
    const storage::Transaction tx = h.Load(gid);
    CHECK(Action(tx).attempts == 0);
    CHECK(Action(tx).failures == 0);
    CHECK(Action(tx).last_error.empty());
    CHECK(Action(tx).next_retry_at <= t0);
    REQUIRE(tx.global.next_cron_time);
    CHECK(*tx.global.next_cron_time <= t0);
    CHECK(h.scheduler().DueTime(gid) == t0 + TwoFailures().hold);
  }
  CHECK(h.gates().Hosts().at(0).waiting == 3);  // g2, whose failure opened it, g3 and g4

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

  // Failures are the calls made, nothing more. Each saga the gate holds waits on a broken host
  // and is stored as stuck ("stuck only" lists them all, not only the probe's), with no alert
  // of its own: the host's circuit speaks for them. g1, whose retry is not due, is not held.
  int failures = 0;
  for (const char* gid : {"g1", "g2", "g3", "g4"}) {
    INFO(gid);
    const storage::Transaction tx = h.Load(gid);
    failures += Action(tx).failures;
    CHECK(tx.global.stuck == h.gates().HeldBy(gid).has_value());
  }
  CHECK(failures == 5);
  CHECK(h.Load("g4").global.stuck);
  CHECK(h.alerts().empty());

  // The next probe succeeds: the circuit closes and every waiting saga is driven at once.
  h.Advance(4 * kSecond);
  for (const char* gid : {"g1", "g2", "g3", "g4"}) {
    INFO(gid);
    CHECK(h.StatusOf(gid) == GlobalStatus::kSucceed);
    CHECK_FALSE(h.Load(gid).global.stuck);
  }
  CHECK(CallCount(h) == 9);
  CHECK(h.gates().Hosts().at(0).state == engine::CircuitState::kClosed);
  CHECK(h.gates().Hosts().at(0).waiting == 0);
}

TEST_CASE(
    "retry now of a saga held behind an open circuit calls at once: a failure leaves the "
    "circuit's probe where it was, an answer closes the circuit and releases the others",
    "[coordinator][circuit][retry-now]") {
  engine::HostGateSettings gates = TwoFailures();
  gates.circuit.probe_initial = gates.circuit.probe_max = 60 * kSecond;
  CoordinatorHarness h(engine::RetrySettings{Duration(60'000), 10}, {}, gates);
  h.caller().Script("01", BranchOp::kAction, {Refused(), Refused(), Refused()});
  for (const char* gid : {"g1", "g2", "g3", "g4"}) REQUIRE(h.coordinator().Submit(Saga(gid)).ok());
  REQUIRE(CallCount(h) == 2);  // g1 and g2 opened the circuit; g3 and g4 are held
  const TimePoint probe_at = h.clock().Now() + 60 * kSecond;
  CHECK(h.gates().HeldBy("g3")->next_try_at == probe_at);

  // The host is still down: g3's call goes out, fails as any call, and g3 waits again.
  h.Advance(kSecond);
  REQUIRE(h.coordinator().ResetNextCronTime("g3").ok());
  h.Drain();
  CHECK(CallCount(h) == 3);
  CHECK(h.caller().calls().back().gid == "g3");
  CHECK(Action(h.Load("g3")).failures == 1);
  CHECK(h.gates().Hosts().at(0).state == engine::CircuitState::kOpen);
  CHECK(h.gates().HeldBy("g3")->next_try_at == probe_at);
  h.Advance(10 * kSecond);
  CHECK(CallCount(h) == 3);  // nothing more until the probe

  // A force-stopped saga waits for nothing; the host is back and g4's retry now succeeds.
  REQUIRE(h.coordinator().ForceStop("g2", "moved away").ok());
  h.Drain();
  CHECK_FALSE(h.gates().Holds("g2"));
  REQUIRE(h.coordinator().ResetNextCronTime("g4").ok());
  h.Drain();
  CHECK(h.StatusOf("g4") == GlobalStatus::kSucceed);
  CHECK(h.gates().Hosts().at(0).state == engine::CircuitState::kClosed);
  for (const char* gid : {"g1", "g3"}) {
    INFO(gid);
    CHECK(h.StatusOf(gid) == GlobalStatus::kSucceed);
  }
  CHECK(h.StatusOf("g2") == GlobalStatus::kFailed);
  CHECK(h.clock().Now() < probe_at);
  CHECK(CallCount(h) == 6);  // g3's failure, then g4, g1 and g3
}

TEST_CASE("when the circuit closes, the sagas that waited resume oldest first at the release rate",
          "[coordinator][circuit]") {
  CoordinatorHarness h(engine::RetrySettings{Duration(60'000), 10}, {},
                       TwoFailures(/*release=*/20));
  h.caller().Script("01", BranchOp::kAction, {Refused(), Refused()});
  for (int i = 1; i <= 8; ++i) {
    REQUIRE(h.coordinator().Submit(Saga("g" + std::to_string(i))).ok());
    h.clock().Advance(Duration(1));  // each one a little younger
  }
  REQUIRE(CallCount(h) == 2);
  // The probe at 1 s succeeds (g1 or g2, due again by their own retry, or the oldest woken).
  h.Advance(kSecond);
  const int after_probe = CallCount(h);
  CHECK(after_probe <= 5);
  // Then one a tick of 50 ms (20 a second), oldest first.
  auto succeeded = [&h] {
    std::vector<std::string> done;
    for (int i = 1; i <= 8; ++i) {
      const std::string gid = "g" + std::to_string(i);
      if (h.StatusOf(gid) == GlobalStatus::kSucceed) done.push_back(gid);
    }
    return done;
  };
  std::size_t before = succeeded().size();
  for (int tick = 0; tick < 8 && before < 8; ++tick) {
    h.Advance(calls::HostGatedCaller::kTickEvery);
    const std::vector<std::string> done = succeeded();
    CHECK(done.size() == before + 1);
    before = done.size();
  }
  CHECK(succeeded().size() == 8);
  // Released oldest first: g3 (the oldest held) finished before g8.
  CHECK(Action(h.Load("g3")).update_time < Action(h.Load("g8")).update_time);
}

TEST_CASE("a restart forgets the gates: held sagas are due at their stored times, at once",
          "[coordinator][circuit]") {
  CoordinatorHarness h(engine::RetrySettings{Duration(60'000), 10}, {}, TwoFailures());
  h.caller().Script("01", BranchOp::kAction, {Refused(), Refused()});
  const TimePoint t0 = h.clock().Now();
  for (const char* gid : {"g1", "g2", "g3"}) REQUIRE(h.coordinator().Submit(Saga(gid)).ok());
  REQUIRE(CallCount(h) == 2);
  h.Restart();
  // The new gate is closed: g3, held before, is called at once; g1 and g2 at their retry.
  CHECK(h.StatusOf("g3") == GlobalStatus::kSucceed);
  CHECK(Action(h.Load("g3")).attempts == 1);
  CHECK(CallCount(h) == 3);
  CHECK(h.scheduler().DueTime("g1") == t0 + kSecond);
  h.Advance(kSecond);
  CHECK(h.StatusOf("g1") == GlobalStatus::kSucceed);
  CHECK(h.StatusOf("g2") == GlobalStatus::kSucceed);
}

}  // namespace
}  // namespace settle::drive
