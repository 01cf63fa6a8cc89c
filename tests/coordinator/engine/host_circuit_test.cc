#include "settle/engine/host_circuit.h"

#include <catch2/catch.hpp>

#include <vector>

namespace settle::engine {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Kind = Admission::Kind;

const TimePoint kStart = TimePoint(seconds(1'700'000'000));

CircuitSettings Settings(int failures = 3, Duration probe_max = seconds(30)) {
  CircuitSettings s;
  s.failures = failures;
  s.probe_initial = seconds(1);
  s.probe_max = probe_max;
  s.probe_timeout = seconds(60);
  return s;
}

HostCircuit Circuit(CircuitSettings settings = Settings(), double jitter = 1.0) {
  return HostCircuit(settings, [jitter] { return jitter; });
}

// Reports `n` host failures of calls made while closed.
void Fail(HostCircuit& c, int n, TimePoint now) {
  for (int i = 0; i < n; ++i) {
    REQUIRE(c.Admit(now).kind == Kind::kCall);
    c.OnResult(/*host_failed=*/true, /*probe=*/false, now);
  }
}

BranchOutcome Outcome(BranchResult result, int http_status) {
  BranchOutcome o;
  o.result = result;
  o.http_status = http_status;
  return o;
}

TEST_CASE("a closed circuit lets every call through", "[circuit]") {
  HostCircuit c = Circuit();
  CHECK(c.Admit(kStart).kind == Kind::kCall);
  CHECK(c.Admit(kStart).kind == Kind::kCall);
  CHECK(c.state() == CircuitState::kClosed);
}

TEST_CASE("a circuit opens after the threshold of consecutive host failures", "[circuit]") {
  HostCircuit c = Circuit(Settings(3));
  Fail(c, 2, kStart);
  CHECK(c.state() == CircuitState::kClosed);
  REQUIRE(c.Admit(kStart).kind == Kind::kCall);
  CHECK(c.OnResult(true, false, kStart) == CircuitChange::kOpened);
  CHECK(c.state() == CircuitState::kOpen);
  CHECK(c.opens() == 1);
  CHECK(c.consecutive_failures() == 3);
  CHECK(c.opened_at() == kStart);
  const Admission refused = c.Admit(kStart + milliseconds(10));
  CHECK(refused.kind == Kind::kWait);
  CHECK(refused.until == kStart + seconds(1));
}

TEST_CASE("a success between failures resets the count", "[circuit]") {
  HostCircuit c = Circuit(Settings(3));
  Fail(c, 2, kStart);
  CHECK(c.OnResult(false, false, kStart) == CircuitChange::kNone);
  CHECK(c.consecutive_failures() == 0);
  Fail(c, 2, kStart);
  CHECK(c.state() == CircuitState::kClosed);
}

TEST_CASE("FAILURE and ONGOING are the participant speaking: they reset the count", "[circuit]") {
  CHECK_FALSE(HostFailed(Outcome(BranchResult::kFailure, 409)));
  CHECK_FALSE(HostFailed(Outcome(BranchResult::kOngoing, 425)));
  // FAILURE or ONGOING in the body of a 5xx is still the participant's answer.
  CHECK_FALSE(HostFailed(Outcome(BranchResult::kFailure, 500)));
  CHECK_FALSE(HostFailed(Outcome(BranchResult::kOngoing, 503)));
  CHECK_FALSE(HostFailed(Outcome(BranchResult::kSuccess, 200)));
  // A 4xx means the host is up (a wrong URL, say): retried, but no reason to open.
  CHECK_FALSE(HostFailed(Outcome(BranchResult::kUnknown, 404)));
  CHECK(HostFailed(Outcome(BranchResult::kUnknown, 0)));  // refused, reset, timed out
  CHECK(HostFailed(Outcome(BranchResult::kUnknown, 500)));
  CHECK(HostFailed(Outcome(BranchResult::kUnknown, 503)));

  HostCircuit c = Circuit(Settings(3));
  Fail(c, 2, kStart);
  c.OnResult(HostFailed(Outcome(BranchResult::kFailure, 409)), false, kStart);
  Fail(c, 2, kStart);
  c.OnResult(HostFailed(Outcome(BranchResult::kOngoing, 425)), false, kStart);
  Fail(c, 2, kStart);
  CHECK(c.state() == CircuitState::kClosed);
  CHECK(c.opens() == 0);
}

TEST_CASE("with a threshold of 0 a circuit never opens", "[circuit]") {
  HostCircuit c = Circuit(Settings(0));
  Fail(c, 100, kStart);
  CHECK(c.state() == CircuitState::kClosed);
  CHECK(c.Admit(kStart).kind == Kind::kCall);
}

TEST_CASE("an open circuit lets one probe through once its wait is over", "[circuit]") {
  HostCircuit c = Circuit(Settings(1));
  Fail(c, 1, kStart);
  CHECK(c.Admit(kStart + milliseconds(999)).kind == Kind::kWait);
  const TimePoint due = kStart + seconds(1);
  CHECK(c.Admit(due).kind == Kind::kProbe);
  CHECK(c.state() == CircuitState::kProbing);
  // Only one probe at a time: the others wait for when the next probe would be due if
  // this one fails (the wait doubles to 2 s).
  const Admission other = c.Admit(due + milliseconds(5));
  CHECK(other.kind == Kind::kWait);
  CHECK(other.until == due + seconds(2));
  CHECK(c.Admit(due + seconds(1)).kind == Kind::kWait);
}

TEST_CASE("a probe that succeeds closes the circuit", "[circuit]") {
  HostCircuit c = Circuit(Settings(1));
  Fail(c, 1, kStart);
  const TimePoint due = kStart + seconds(1);
  REQUIRE(c.Admit(due).kind == Kind::kProbe);
  CHECK(c.OnResult(false, true, due + milliseconds(3)) == CircuitChange::kClosed);
  CHECK(c.state() == CircuitState::kClosed);
  CHECK(c.consecutive_failures() == 0);
  CHECK(c.Admit(due + milliseconds(4)).kind == Kind::kCall);
  // Opening again starts from the first wait.
  Fail(c, 1, due + seconds(10));
  CHECK(c.opens() == 2);
  CHECK(c.next_probe_at() == due + seconds(11));
}

TEST_CASE("a probe that fails reopens the circuit with a doubled wait, up to the cap",
          "[circuit]") {
  HostCircuit c = Circuit(Settings(1, seconds(5)));
  Fail(c, 1, kStart);
  TimePoint now = kStart;
  std::vector<Duration> waits;
  for (int i = 0; i < 6; ++i) {
    now = c.next_probe_at();
    REQUIRE(c.Admit(now).kind == Kind::kProbe);
    CHECK(c.OnResult(true, true, now) == CircuitChange::kStillOpen);
    CHECK(c.state() == CircuitState::kOpen);
    waits.push_back(c.next_probe_at() - now);
    CHECK(c.Admit(now).kind == Kind::kWait);
  }
  CHECK(waits == std::vector<Duration>{seconds(2), seconds(4), seconds(5), seconds(5), seconds(5),
                                       seconds(5)});
  CHECK(c.opens() == 1);
}

TEST_CASE("probe waits are jittered within bounds and never above the cap", "[circuit]") {
  for (double jitter : {0.8, 1.2}) {
    HostCircuit c = Circuit(Settings(1, seconds(8)), jitter);
    Fail(c, 1, kStart);
    CHECK(c.next_probe_at() - kStart == milliseconds(static_cast<int>(1000 * jitter)));
    TimePoint now = c.next_probe_at();
    for (int i = 0; i < 5; ++i) {
      REQUIRE(c.Admit(now).kind == Kind::kProbe);
      c.OnResult(true, true, now);
      const Duration wait = c.next_probe_at() - now;
      CHECK(wait >= milliseconds(static_cast<int>(c.probe_wait().count() * 0.8)));
      CHECK(wait <= seconds(8));
      now = c.next_probe_at();
    }
    CHECK(c.probe_wait() == seconds(8));
  }
  // The default jitter stays within [0.8, 1.2] of the wait.
  HostCircuit c(Settings(1), RetryPolicy::RandomJitter());
  for (int i = 0; i < 50; ++i) {
    const TimePoint now = kStart + seconds(100 * i);
    if (c.state() == CircuitState::kClosed) {
      Fail(c, 1, now);
    } else {
      REQUIRE(c.Admit(c.next_probe_at()).kind == Kind::kProbe);
      c.OnResult(false, true, now);
      continue;
    }
    const Duration wait = c.next_probe_at() - now;
    CHECK(wait >= milliseconds(800));
    CHECK(wait <= milliseconds(1200));
  }
}

TEST_CASE("a late failure of a call made before the circuit opened changes nothing", "[circuit]") {
  HostCircuit c = Circuit(Settings(1));
  Fail(c, 1, kStart);
  const TimePoint probe_at = c.next_probe_at();
  CHECK(c.OnResult(true, false, kStart + milliseconds(500)) == CircuitChange::kNone);
  CHECK(c.next_probe_at() == probe_at);
  REQUIRE(c.Admit(probe_at).kind == Kind::kProbe);
  CHECK(c.OnResult(true, false, probe_at) == CircuitChange::kNone);
  CHECK(c.state() == CircuitState::kProbing);
}

TEST_CASE("a late answer from the host closes an open circuit", "[circuit]") {
  HostCircuit c = Circuit(Settings(1));
  Fail(c, 1, kStart);
  CHECK(c.OnResult(false, false, kStart + milliseconds(100)) == CircuitChange::kClosed);
  CHECK(c.Admit(kStart + milliseconds(100)).kind == Kind::kCall);
}

TEST_CASE("a probe whose result never comes is given up after probe_timeout", "[circuit]") {
  HostCircuit c = Circuit(Settings(1));
  Fail(c, 1, kStart);
  const TimePoint due = c.next_probe_at();
  REQUIRE(c.Admit(due).kind == Kind::kProbe);
  const Admission waiting = c.Admit(due + seconds(3));
  CHECK(waiting.kind == Kind::kWait);
  CHECK(waiting.until == due + seconds(60));
  CHECK(c.Admit(due + seconds(60)).kind == Kind::kProbe);
}

}  // namespace
}  // namespace settle::engine
