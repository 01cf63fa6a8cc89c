// The gate of one participant host: its circuit, its cap on calls in flight, and the
// transactions held for it, woken oldest first at the release rate into free slots.
#include "settle/engine/host_gate.h"

#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <vector>

namespace settle::engine {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Kind = GateAdmission::Kind;
using Gids = std::vector<std::string>;

const TimePoint kStart = TimePoint(seconds(1'700'000'000));

HostGateSettings Settings(int max_in_flight, int release_per_second, int failures = 2) {
  HostGateSettings s;
  s.circuit.failures = failures;
  s.circuit.probe_initial = seconds(1);
  s.circuit.probe_max = seconds(8);
  s.max_in_flight = max_in_flight;
  s.release_per_second = release_per_second;
  s.hold = seconds(300);
  s.wake_grace = seconds(2);
  return s;
}

HostGate Gate(HostGateSettings settings) {
  return HostGate(settings, [] { return 1.0; });
}

// When transaction "g<n>" was created: g1 is the oldest.
TimePoint Created(const std::string& gid) {
  return kStart - seconds(1000) + seconds(std::stoi(gid.substr(1)));
}

GateAdmission Admit(HostGate& gate, const std::string& gid, TimePoint now) {
  return gate.Admit(gid, Created(gid), now);
}

CircuitChange End(HostGate& gate, const std::string& gid, bool failed, TimePoint now,
                  bool probe = false) {
  return gate.OnResult(gid, Created(gid), failed, probe, now);
}

// Opens the circuit with two failed calls of g1 and g2, then holds g3..g<last>.
void OpenWithWaiting(HostGate& gate, int last, TimePoint now) {
  for (const char* gid : {"g1", "g2"}) {
    REQUIRE(Admit(gate, gid, now).kind == Kind::kCall);
    End(gate, gid, true, now);
  }
  REQUIRE(gate.circuit().state() == CircuitState::kOpen);
  for (int i = 3; i <= last; ++i) {
    const GateAdmission held = Admit(gate, "g" + std::to_string(i), now);
    REQUIRE(held.kind == Kind::kHeld);
    REQUIRE(held.circuit_open);
  }
}

TEST_CASE("under the cap every call goes out and is counted in flight until its result", "[gate]") {
  HostGate gate = Gate(Settings(2, 0));
  CHECK(Admit(gate, "g1", kStart).kind == Kind::kCall);
  CHECK(Admit(gate, "g2", kStart).kind == Kind::kCall);
  CHECK(gate.in_flight() == 2);
  End(gate, "g1", false, kStart);
  CHECK(gate.in_flight() == 1);
  CHECK(gate.waiting() == 0);
  CHECK(gate.TakeWoken(kStart).empty());
}

TEST_CASE("at the cap a call is held, not made, and the end of a call wakes the oldest held",
          "[gate]") {
  HostGate gate = Gate(Settings(2, 0));
  REQUIRE(Admit(gate, "g1", kStart).kind == Kind::kCall);
  REQUIRE(Admit(gate, "g2", kStart).kind == Kind::kCall);
  const GateAdmission held = Admit(gate, "g4", kStart);
  CHECK(held.kind == Kind::kHeld);
  CHECK_FALSE(held.circuit_open);
  CHECK(held.until == kStart + seconds(300));
  REQUIRE(Admit(gate, "g3", kStart).kind == Kind::kHeld);
  CHECK(gate.waiting() == 2);
  CHECK(gate.held_at_cap() == 2);
  CHECK(gate.TakeWoken(kStart).empty());  // no slot free

  End(gate, "g1", false, kStart);
  CHECK(gate.TakeWoken(kStart) == Gids{"g3"});  // the oldest, not the first held
  // g3's slot is kept for it: a newcomer is held, and so is a second wake.
  CHECK(Admit(gate, "g5", kStart).kind == Kind::kHeld);
  CHECK(gate.TakeWoken(kStart).empty());
  // g3 comes and takes its slot.
  CHECK(Admit(gate, "g3", kStart).kind == Kind::kCall);
  CHECK(gate.in_flight() == 2);
  CHECK(gate.waiting() == 2);  // g4, g5
}

TEST_CASE("a woken transaction that does not come within the grace gives its slot back", "[gate]") {
  HostGate gate = Gate(Settings(1, 0));
  REQUIRE(Admit(gate, "g1", kStart).kind == Kind::kCall);
  REQUIRE(Admit(gate, "g2", kStart).kind == Kind::kHeld);
  REQUIRE(Admit(gate, "g3", kStart).kind == Kind::kHeld);
  End(gate, "g1", false, kStart);
  REQUIRE(gate.TakeWoken(kStart) == Gids{"g2"});
  CHECK(gate.TakeWoken(kStart + milliseconds(1999)).empty());
  CHECK(gate.TakeWoken(kStart + seconds(2)) == Gids{"g3"});
}

TEST_CASE("without a cap nothing is held while the circuit is closed", "[gate]") {
  HostGate gate = Gate(Settings(0, 0));
  for (int i = 1; i <= 1000; ++i) {
    REQUIRE(Admit(gate, "g" + std::to_string(i), kStart).kind == Kind::kCall);
  }
  CHECK(gate.in_flight() == 1000);
  CHECK(gate.waiting() == 0);
}

TEST_CASE("while the circuit is open the oldest waiting transaction is woken to be the probe",
          "[gate]") {
  HostGate gate = Gate(Settings(0, 0));
  OpenWithWaiting(gate, 4, kStart);
  // g2's failure opened it and g3, g4 were held; g1 failed while it was closed (its own
  // retry brings it back).
  CHECK(gate.waiting() == 3);
  CHECK(gate.TakeWoken(kStart + milliseconds(999)).empty());
  const TimePoint due = kStart + seconds(1);
  CHECK(gate.TakeWoken(due) == Gids{"g2"});
  // One probe candidate per grace: the next is woken only if g2 has not come by then.
  CHECK(gate.TakeWoken(due + milliseconds(1999)).empty());
  CHECK(gate.TakeWoken(due + seconds(2)) == Gids{"g3"});

  // g3 comes: its call is the probe; the others wait; its failure opens the circuit again.
  const TimePoint probe_at = due + seconds(2);
  REQUIRE(Admit(gate, "g3", probe_at).kind == Kind::kProbe);
  CHECK(Admit(gate, "g4", probe_at).kind == Kind::kHeld);
  CHECK(gate.TakeWoken(probe_at).empty());
  CHECK(End(gate, "g3", true, probe_at, true) == CircuitChange::kStillOpen);
  CHECK(gate.waiting() == 2);  // g3 and g4 (g2 never came back)
  // The wait doubled: the next probe is 2 s away.
  CHECK(gate.TakeWoken(probe_at + milliseconds(1999)).empty());
  CHECK(gate.TakeWoken(probe_at + seconds(2)) == Gids{"g3"});
}

TEST_CASE("a closed circuit releases its waiting transactions oldest first at the release rate",
          "[gate]") {
  HostGate gate = Gate(Settings(0, 20));  // 20 a second: one each 50 ms
  OpenWithWaiting(gate, 30, kStart);
  const TimePoint t = kStart + seconds(1);
  REQUIRE(Admit(gate, "g7", t).kind == Kind::kProbe);
  CHECK(End(gate, "g7", false, t, true) == CircuitChange::kClosed);
  CHECK(gate.releasing());
  CHECK(gate.waiting() == 28);             // g2..g30 but g7
  CHECK(gate.TakeWoken(t) == Gids{"g2"});  // the first at once
  CHECK(gate.TakeWoken(t + milliseconds(49)).empty());
  CHECK(gate.TakeWoken(t + milliseconds(50)) == Gids{"g3"});
  // A long gap does not save up more than a tenth of a second's worth.
  CHECK(gate.TakeWoken(t + seconds(10)) == Gids{"g4", "g5"});
  CHECK(gate.TakeWoken(t + seconds(10) + milliseconds(50)) == Gids{"g6"});
  CHECK(gate.released() == 5);
  // A new transaction's call does not wait behind them.
  CHECK(Admit(gate, "g99", t + seconds(10)).kind == Kind::kCall);
}

TEST_CASE(
    "a waiting transaction that comes by itself during the release keeps its place: only a "
    "wake lets it call",
    "[gate]") {
  HostGate gate = Gate(Settings(0, 20));
  OpenWithWaiting(gate, 6, kStart);
  const TimePoint t = kStart + seconds(1);
  REQUIRE(Admit(gate, "g6", t).kind == Kind::kProbe);
  REQUIRE(End(gate, "g6", false, t, true) == CircuitChange::kClosed);
  REQUIRE(gate.TakeWoken(t) == Gids{"g2"});
  // g5 comes back on its own (its hold ran out) before its turn: held again, in its place.
  const GateAdmission again = Admit(gate, "g5", t);
  CHECK(again.kind == Kind::kHeld);
  CHECK(again.releasing);
  CHECK_FALSE(again.circuit_open);
  CHECK(gate.waiting() == 3);  // g3, g4, g5
  // A new transaction is not held.
  CHECK(Admit(gate, "g9", t).kind == Kind::kCall);
  CHECK(gate.TakeWoken(t + milliseconds(50)) == Gids{"g3"});
  CHECK(gate.TakeWoken(t + milliseconds(100)) == Gids{"g4"});
  CHECK(gate.TakeWoken(t + milliseconds(150)) == Gids{"g5"});
  CHECK(gate.released() == 4);
  CHECK_FALSE(gate.releasing());
  // Once the release is over, a transaction coming by itself calls as usual.
  CHECK(Admit(gate, "g5", t + milliseconds(150)).kind == Kind::kCall);
}

TEST_CASE("the hold is jittered so that transactions held together do not look again together",
          "[gate]") {
  HostGateSettings settings = Settings(0, 0);
  HostGate early(settings, [] { return 0.8; });
  HostGate late(settings, [] { return 1.2; });
  for (HostGate* gate : {&early, &late}) {
    OpenWithWaiting(*gate, 2, kStart);
  }
  CHECK(Admit(early, "g3", kStart).until == kStart + seconds(240));
  CHECK(Admit(late, "g3", kStart).until == kStart + seconds(360));
}

TEST_CASE("the release stays under the cap: a slot frees, one more is woken", "[gate]") {
  HostGate gate = Gate(Settings(2, 0));  // no rate: only the cap paces it
  OpenWithWaiting(gate, 6, kStart);
  const TimePoint t = kStart + seconds(1);
  REQUIRE(Admit(gate, "g6", t).kind == Kind::kProbe);
  REQUIRE(End(gate, "g6", false, t, true) == CircuitChange::kClosed);
  CHECK(gate.TakeWoken(t) == Gids{"g2", "g3"});
  REQUIRE(Admit(gate, "g2", t).kind == Kind::kCall);
  REQUIRE(Admit(gate, "g3", t).kind == Kind::kCall);
  CHECK(gate.TakeWoken(t).empty());
  End(gate, "g3", false, t);
  CHECK(gate.TakeWoken(t) == Gids{"g4"});
  REQUIRE(Admit(gate, "g4", t).kind == Kind::kCall);
  End(gate, "g2", false, t);
  End(gate, "g4", false, t);
  CHECK(gate.TakeWoken(t) == Gids{"g5"});
  CHECK_FALSE(gate.releasing());  // every waiting one is woken
  CHECK(gate.released() == 4);
}

TEST_CASE("a failure that reopens the circuit stops the release, and the rest wait for a probe",
          "[gate]") {
  HostGate gate = Gate(Settings(0, 10));
  OpenWithWaiting(gate, 5, kStart);
  const TimePoint t = kStart + seconds(1);
  REQUIRE(Admit(gate, "g5", t).kind == Kind::kProbe);
  REQUIRE(End(gate, "g5", false, t, true) == CircuitChange::kClosed);
  REQUIRE(gate.TakeWoken(t) == Gids{"g2"});
  REQUIRE(Admit(gate, "g2", t).kind == Kind::kCall);
  REQUIRE(Admit(gate, "g8", t).kind == Kind::kCall);
  End(gate, "g2", true, t);
  CHECK(End(gate, "g8", true, t) == CircuitChange::kOpened);
  CHECK_FALSE(gate.releasing());
  CHECK(gate.TakeWoken(t + milliseconds(500)).empty());
  CHECK(gate.waiting() == 3);  // g3, g4 still held, and g8, whose failure opened it
}

TEST_CASE("a call that fails while the circuit is open waits for it like a held one", "[gate]") {
  HostGate gate = Gate(Settings(0, 0));
  REQUIRE(Admit(gate, "g1", kStart).kind == Kind::kCall);  // out before the circuit opened
  OpenWithWaiting(gate, 3, kStart);
  End(gate, "g1", true, kStart);
  CHECK(gate.waiting() == 3);
}

TEST_CASE(
    "a retry now calls through an open circuit: its answer closes the circuit, its failure "
    "leaves the circuit's probe where it was",
    "[gate][retry-now]") {
  HostGate gate = Gate(Settings(0, 0));
  OpenWithWaiting(gate, 4, kStart);
  const TimePoint probe_at = gate.circuit().next_probe_at();
  REQUIRE(probe_at == kStart + seconds(1));
  const TimePoint t = kStart + milliseconds(100);  // long before the probe
  CHECK(Admit(gate, "g3", t).kind == Kind::kHeld);
  REQUIRE(gate.Admit("g3", Created("g3"), t, true).kind == Kind::kForced);
  CHECK_FALSE(gate.Holds("g3"));
  CHECK(gate.in_flight() == 1);
  // It failed: the circuit is open as before, its probe at the same time, and g3 waits again.
  CHECK(End(gate, "g3", true, t) == CircuitChange::kNone);
  CHECK(gate.circuit().state() == CircuitState::kOpen);
  CHECK(gate.circuit().next_probe_at() == probe_at);
  CHECK(gate.circuit().probe_wait() == seconds(1));
  CHECK(gate.Holds("g3"));
  CHECK(gate.TakeWoken(probe_at - milliseconds(1)).empty());
  CHECK(gate.TakeWoken(probe_at) == Gids{"g2"});

  // Another one answers: the circuit closes and the waiting ones are released.
  const TimePoint later = probe_at + milliseconds(10);
  REQUIRE(gate.Admit("g4", Created("g4"), later, true).kind == Kind::kForced);
  CHECK(End(gate, "g4", false, later) == CircuitChange::kClosed);
  CHECK(gate.circuit().state() == CircuitState::kClosed);
  CHECK(gate.releasing());
  CHECK(gate.TakeWoken(later) == Gids{"g3"});
}

TEST_CASE("a retry now goes before its turn in the release but not past the cap",
          "[gate][retry-now]") {
  HostGate gate = Gate(Settings(2, 1));  // one a second, two in flight at most
  OpenWithWaiting(gate, 6, kStart);
  const TimePoint t = kStart + seconds(1);
  REQUIRE(Admit(gate, "g6", t).kind == Kind::kProbe);
  REQUIRE(End(gate, "g6", false, t, true) == CircuitChange::kClosed);
  REQUIRE(gate.TakeWoken(t) == Gids{"g2"});
  // g5 waits its turn in the release; a retry now calls at once, closed circuit or not.
  CHECK(Admit(gate, "g5", t).kind == Kind::kHeld);
  CHECK(gate.Admit("g5", Created("g5"), t, true).kind == Kind::kCall);
  CHECK_FALSE(gate.Holds("g5"));
  // g2's slot is reserved and g5's call is out: the cap holds even a retry now.
  const GateAdmission capped = gate.Admit("g4", Created("g4"), t, true);
  CHECK(capped.kind == Kind::kHeld);
  CHECK_FALSE(capped.circuit_open);
}

TEST_CASE(
    "a host's retry now takes its oldest waiting transaction, and a finished one is forgotten",
    "[gate][retry-now]") {
  HostGate gate = Gate(Settings(0, 0));
  CHECK_FALSE(gate.TakeOldest());
  OpenWithWaiting(gate, 5, kStart);
  REQUIRE(gate.waiting() == 4);  // g2..g5
  CHECK(gate.TakeOldest() == std::optional<std::string>("g2"));
  CHECK_FALSE(gate.Holds("g2"));
  CHECK(gate.Forget("g4"));
  CHECK_FALSE(gate.Forget("g4"));
  CHECK_FALSE(gate.Holds("g4"));
  CHECK(gate.OldestWaiting(10) == Gids{"g3", "g5"});
  // The probe's wake skips the forgotten one.
  CHECK(gate.TakeWoken(kStart + seconds(1)) == Gids{"g3"});
  CHECK(gate.TakeWoken(kStart + seconds(3)) == Gids{"g5"});
  CHECK(gate.waiting() == 0);
}

}  // namespace
}  // namespace settle::engine
