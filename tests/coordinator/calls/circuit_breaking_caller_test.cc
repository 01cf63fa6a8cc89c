// CircuitBreakingCaller in front of scripted participants, on a fake clock: which calls go out,
// what a refused call's outcome says, and who is woken when a circuit closes.
#include "settle/calls/circuit_breaking_caller.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "fake_clock.h"
#include "scripted_branch_caller.h"

namespace settle::coordinator {
namespace {

using settle::testing::FakeClock;
using settle::testing::ScriptedBranchCaller;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr const char* kDown = "http://127.0.0.1:9/api/action";
constexpr const char* kOther = "http://127.0.0.1:10/api/action";

CircuitSettings Settings(int failures = 2) {
  CircuitSettings s;
  s.failures = failures;
  s.probe_initial = seconds(1);
  s.probe_max = seconds(4);
  return s;
}

BranchCall CallTo(const std::string& url, const std::string& gid) {
  BranchCall call;
  call.gid = gid;
  call.branch_id = "01";
  call.op = BranchOp::kAction;
  call.url = url;
  return call;
}

BranchOutcome Refused() { return {BranchResult::kUnknown, 0, "connection refused"}; }

// Runs CallAll to its end (the scripted caller never suspends).
std::vector<BranchOutcome> Run(CircuitBreakingCaller& caller, std::vector<BranchCall> calls) {
  asio::io_context io;
  std::vector<BranchOutcome> outcomes;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        std::vector<BranchOutcome> got = co_await caller.CallAll(std::move(calls));
        outcomes = std::move(got);
      },
      asio::detached);
  io.run();
  return outcomes;
}

BranchOutcome RunOne(CircuitBreakingCaller& caller, const std::string& url,
                     const std::string& gid) {
  return Run(caller, {CallTo(url, gid)}).at(0);
}

struct Fixture {
  FakeClock clock;
  ScriptedBranchCaller participants;
  CircuitBreakingCaller caller{participants, clock, Settings(), [] { return 1.0; }};
  std::vector<std::string> woken;
  Fixture() {
    caller.SetOnClose([this](const std::vector<std::string>& gids) {
      woken.insert(woken.end(), gids.begin(), gids.end());
    });
  }
  // Opens kDown's circuit with two refused calls.
  void OpenDown() {
    participants.Script("01", BranchOp::kAction, {Refused(), Refused()});
    RunOne(caller, kDown, "g1");
    RunOne(caller, kDown, "g2");
    participants.ClearCalls();
  }
};

TEST_CASE("a call to a host whose circuit is open is not made: it is due again at the probe",
          "[circuit]") {
  Fixture f;
  f.OpenDown();
  f.clock.Advance(milliseconds(300));
  const BranchOutcome refused = RunOne(f.caller, kDown, "g3");
  CHECK(f.participants.calls().empty());
  REQUIRE(refused.not_called_until);
  CHECK(*refused.not_called_until == f.clock.Now() + milliseconds(700));
  CHECK(refused.circuit_open);
  CHECK(refused.result == BranchResult::kUnknown);
  const std::vector<HostCircuitView> circuits = f.caller.Circuits();
  REQUIRE(circuits.size() == 1);
  CHECK(circuits[0].host == "http://127.0.0.1:9");
  CHECK(circuits[0].state == CircuitState::kOpen);
  CHECK(circuits[0].opens == 1);
  CHECK(circuits[0].waiting == 2);  // g2, whose failure opened it, and g3
}

TEST_CASE("one probe goes out when it is due, its failure is marked and others keep waiting",
          "[circuit]") {
  Fixture f;
  f.OpenDown();
  RunOne(f.caller, kDown, "g3");
  f.clock.Advance(seconds(1));
  f.participants.Script("01", BranchOp::kAction, {Refused()});
  // Two calls in one round to the same host: the first is the probe, the second waits.
  const std::vector<BranchOutcome> outcomes =
      Run(f.caller, {CallTo(kDown, "g3"), CallTo(kDown, "g4")});
  CHECK(f.participants.calls().size() == 1);
  CHECK_FALSE(outcomes[0].not_called_until);
  CHECK(outcomes[0].circuit_open);  // the circuit logs for the host, not the driver
  REQUIRE(outcomes[1].not_called_until);
  // The failed probe doubled the wait: the next probe is 2 s away.
  const BranchOutcome later = RunOne(f.caller, kDown, "g5");
  REQUIRE(later.not_called_until);
  CHECK(*later.not_called_until == f.clock.Now() + seconds(2));
  CHECK(f.participants.calls().size() == 1);
  CHECK(f.woken.empty());
}

TEST_CASE("a probe that succeeds closes the circuit and wakes the transactions it refused",
          "[circuit]") {
  Fixture f;
  f.OpenDown();
  RunOne(f.caller, kDown, "g3");
  RunOne(f.caller, kDown, "g4");
  RunOne(f.caller, kDown, "g4");
  f.clock.Advance(seconds(1));
  const BranchOutcome probe = RunOne(f.caller, kDown, "g3");
  CHECK(probe.result == BranchResult::kSuccess);
  CHECK_FALSE(probe.circuit_open);
  // g3 was the probe: g4 still waited, and so did g2, whose failure opened the circuit.
  std::sort(f.woken.begin(), f.woken.end());
  CHECK(f.woken == std::vector<std::string>{"g2", "g4"});
  // Their passes take the host that released them, once.
  CHECK(f.caller.TakeReleased("g4") == std::vector<std::string>{"http://127.0.0.1:9"});
  CHECK(f.caller.TakeReleased("g4").empty());
  CHECK(f.caller.TakeReleased("g3").empty());
  CHECK(f.caller.Circuits().at(0).state == CircuitState::kClosed);
  CHECK(f.caller.Circuits().at(0).waiting == 0);
  const BranchOutcome after = RunOne(f.caller, kDown, "g4");
  CHECK_FALSE(after.not_called_until);
  CHECK(f.participants.calls().size() == 2);
}

TEST_CASE("each host has its own circuit", "[circuit]") {
  Fixture f;
  f.OpenDown();
  const std::vector<BranchOutcome> outcomes =
      Run(f.caller, {CallTo(kDown, "g3"), CallTo(kOther, "g3")});
  CHECK(outcomes[0].not_called_until);
  CHECK_FALSE(outcomes[1].not_called_until);
  CHECK(outcomes[1].result == BranchResult::kSuccess);
  REQUIRE(f.participants.calls().size() == 1);
  CHECK(f.participants.calls()[0].url == kOther);
}

TEST_CASE("FAILURE and ONGOING answers keep a circuit closed", "[circuit]") {
  Fixture f;
  f.participants.Script(
      "01", BranchOp::kAction,
      {Refused(), settle::testing::Failure(), Refused(), settle::testing::Ongoing(), Refused()});
  for (int i = 0; i < 5; ++i) {
    CHECK_FALSE(RunOne(f.caller, kDown, "g" + std::to_string(i)).not_called_until);
  }
  CHECK(f.caller.Circuits().at(0).state == CircuitState::kClosed);
  CHECK(f.caller.Circuits().at(0).opens == 0);
}

TEST_CASE("with --circuit-failures 0 every call goes out", "[circuit]") {
  FakeClock clock;
  ScriptedBranchCaller participants;
  CircuitBreakingCaller caller(participants, clock, Settings(0));
  participants.Script("01", BranchOp::kAction, std::vector<BranchOutcome>(10, Refused()));
  for (int i = 0; i < 10; ++i) CHECK_FALSE(RunOne(caller, kDown, "g").not_called_until);
  CHECK(participants.calls().size() == 10);
  CHECK(caller.Circuits().empty());
}

TEST_CASE("a call whose URL does not parse has no circuit", "[circuit]") {
  Fixture f;
  const BranchOutcome outcome = RunOne(f.caller, "not a url", "g1");
  CHECK_FALSE(outcome.not_called_until);
  CHECK(f.participants.calls().size() == 1);
  CHECK(f.caller.Circuits().empty());
}

}  // namespace
}  // namespace settle::coordinator
