#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "settle/core/clock.h"
#include "settle/engine/host_circuit.h"

namespace settle::engine {

// Server-wide settings of the gate in front of every participant host (docs/operations.md,
// "Participant outages").
struct HostGateSettings {
  CircuitSettings circuit;
  // Calls in flight to one host at most, at all times (--host-max-in-flight; 0: no cap).
  int max_in_flight = 128;
  // Transactions released per second when the circuit of their host closes
  // (--circuit-release-rate; 0: as fast as the cap allows).
  int release_per_second = 500;
  // A held transaction looks again by itself after about this long (jittered by ±20%, so that
  // many held together do not come back together), if nothing woke it first: a safety net, not
  // the way it resumes. While its host's gate still holds it, it is held again.
  Duration hold{600'000};
  // A woken transaction keeps the slot it was woken for this long while its pass comes.
  Duration wake_grace{2000};
  // For the owner of the gates (calls::HostGatedCaller; docs/operations.md, "Hostile
  // clients"): gates kept at most, the shared overflow gate of the hosts beyond them included
  // (--max-hosts; 0: no cap), and how long a gate that holds nothing and has no call out is
  // kept after its last call.
  std::size_t max_hosts = 512;
  Duration idle_after{600'000};
};

// What the gate lets one call do now.
struct GateAdmission {
  enum class Kind {
    kCall,    // call as usual
    kProbe,   // the circuit is open and its probe is due: this call is the probe
    kHeld,    // do not call: the transaction waits for the gate to wake it
    kForced,  // the circuit is open, and an operator's Retry now sends this call anyway
  };
  Kind kind = Kind::kCall;
  // kHeld only: why (the host's open circuit, its turn in the release after the circuit
  // closed, or else the cap on calls in flight), and when the transaction looks again by
  // itself if nothing woke it by then.
  bool circuit_open = false;
  bool releasing = false;
  TimePoint until;
};

// The gate of one participant host (scheme, host, port): its circuit (HostCircuit), a cap on
// its calls in flight, and the transactions held for it, oldest first. A pure state machine:
// the caller passes the time, reports every result, and drives the transactions TakeWoken
// names.
//
// A call is held when the circuit refuses it or when max_in_flight calls are out; the
// transaction then waits in the gate, costing nothing until it is woken:
//   - while the circuit is open, the oldest waiting transaction is woken when a probe is due
//     (at most one every wake_grace: the probe);
//   - once it closes, the waiting transactions are woken oldest first, at most
//     release_per_second, and only into free slots under the cap;
//   - under the cap at other times, one is woken for each call that ends.
// A waiting transaction that comes by itself (its own due time, the hold) is held again while
// the circuit is open or the release goes on: only a wake lets it call, oldest first.
// An operator's Retry now (Admit's `forced`) is a call now whatever the circuit says, and
// whatever its turn in the release: it goes out as the circuit's probe would (an answer closes
// the circuit), but it is not the circuit's probe, so a failure leaves the circuit as it was
// (open, its next probe when it was due). Only the cap on calls in flight holds it.
// A woken transaction holds a slot for wake_grace while its pass comes, so that wakes never
// add up to more calls than the cap; its call then takes the slot. A new transaction's call
// goes out whenever a slot is free (the released ones do not make it wait).
//
// Not thread-safe: its owner serialises the calls.
class HostGate {
 public:
  explicit HostGate(HostGateSettings settings,
                    RetryPolicy::Jitter jitter = RetryPolicy::RandomJitter());

  // A call of transaction `gid`, created at `created`, to this host now. `forced`: an
  // operator's Retry now (see above).
  GateAdmission Admit(const std::string& gid, TimePoint created, TimePoint now,
                      bool forced = false);
  // The result of a call Admit let through (`probe`: admitted as kProbe). A failure that
  // leaves the circuit open makes its transaction wait for the circuit too.
  CircuitChange OnResult(const std::string& gid, TimePoint created, bool host_failed, bool probe,
                         TimePoint now);
  // The waiting transactions to drive now (see above), forgotten as they are returned.
  std::vector<std::string> TakeWoken(TimePoint now);
  // An operator's Retry now of this host: the oldest waiting transaction, taken out of the
  // queue to be driven at once (its call then Admit-ted as `forced`); nullopt if none waits.
  std::optional<std::string> TakeOldest();
  // Forgets `gid` if it waits here (it finished, or an operator stopped it): it is neither
  // woken nor shown as waiting. Whether it waited.
  bool Forget(const std::string& gid);

  const HostCircuit& circuit() const { return circuit_; }
  std::size_t waiting() const { return waiting_.size(); }
  // Whether `gid` waits in this gate (it will be woken).
  bool Holds(const std::string& gid) const { return waiting_.contains(gid); }
  // The gids of the `n` oldest waiting transactions, oldest first.
  std::vector<std::string> OldestWaiting(std::size_t n) const;
  int in_flight() const { return in_flight_; }
  // Releasing the transactions that waited for the circuit, since it closed.
  bool releasing() const { return releasing_; }
  std::uint64_t released() const { return released_; }  // woken since the circuit last closed
  TimePoint closed_at() const { return closed_at_; }
  std::uint64_t held_at_cap() const { return held_at_cap_; }  // calls held by the cap, ever

 private:
  void Wait(const std::string& gid, TimePoint created);
  // Holds the call of `gid`: it waits, and looks again by itself after a jittered hold.
  GateAdmission Hold(const std::string& gid, TimePoint created, TimePoint now, bool circuit_open,
                     bool releasing);
  // Takes the oldest waiting transaction out of the queue.
  std::string PopOldest();
  // Slots left under the cap for calls and woken transactions (a large number without a cap).
  std::size_t FreeSlots(TimePoint now);

  const HostGateSettings settings_;
  const RetryPolicy::Jitter jitter_;
  HostCircuit circuit_;
  int in_flight_ = 0;
  std::set<std::pair<TimePoint, std::string>> queue_;    // (created, gid), oldest first
  std::unordered_map<std::string, TimePoint> waiting_;   // gid -> created, as in queue_
  std::unordered_map<std::string, TimePoint> reserved_;  // woken gid -> end of its grace
  TimePoint next_probe_wake_;                            // while open
  bool releasing_ = false;
  double tokens_ = 0;  // wakes the release rate allows now
  TimePoint refilled_at_;
  TimePoint closed_at_;
  std::uint64_t released_ = 0;
  std::uint64_t held_at_cap_ = 0;
};

}  // namespace settle::engine
