#pragma once

#include <cstdint>
#include <string_view>

#include "settle/core/clock.h"
#include "settle/engine/branch_call.h"
#include "settle/engine/retry_policy.h"

namespace settle::engine {

// Server-wide circuit settings (--circuit-failures, --circuit-probe-max).
struct CircuitSettings {
  int failures = 5;              // consecutive host failures that open a circuit; 0: never
  Duration probe_initial{1000};  // the first wait of an open circuit before its probe
  Duration probe_max{30'000};    // the cap of the doubling wait between probes
  // A probe whose result never comes (its pass was stopped) is given up after this long, and
  // the next call goes out as a new probe.
  Duration probe_timeout{60'000};
};

enum class CircuitState { kClosed, kOpen, kProbing };

std::string_view ToString(CircuitState state);

// What a circuit lets a call do now.
struct Admission {
  enum class Kind {
    kCall,   // closed: call as usual
    kProbe,  // open and its probe is due: this call is the probe
    kWait,   // open: do not call; ask again at `until`
  };
  Kind kind = Kind::kCall;
  TimePoint until;  // kWait only
};

// What a result changed, for the one log line a change deserves.
enum class CircuitChange {
  kNone,
  kOpened,     // closed -> open: the threshold of consecutive failures was reached
  kClosed,     // open or probing -> closed: the host answered
  kStillOpen,  // the probe failed: open again, with a longer wait
};

// Whether an outcome says the participant's host is down: no answer at all (connection
// refused or reset, timed out) or a 5xx that is neither FAILURE nor ONGOING. Any other
// answer, FAILURE and ONGOING included, is the participant speaking: its host is up.
bool HostFailed(const BranchOutcome& outcome);

// The circuit of one participant host (scheme, host, port), a pure state machine: the caller
// passes the time and reports every result.
//
//   closed --`failures` consecutive host failures--> open (wait probe_initial, jittered)
//   open --a call after the wait--> probing (that one call is the probe; the others wait)
//   probing --the probe's host failure--> open (the wait doubles, up to probe_max, jittered)
//   open or probing --any answer from the host (a probe's, or a late call's)--> closed
//
// While open or probing, calls are refused with the time to ask again: the next probe's
// time, or while a probe is out, when the next one would be due if it failed. A failure that
// is not the probe's changes nothing once open (calls made before it opened end late).
// Jitter (factors in [0.8, 1.2], as RetryPolicy's) spreads the probes of many hosts that
// failed together; it never takes a wait above probe_max.
//
// Not thread-safe: its owner serialises the calls.
class HostCircuit {
 public:
  explicit HostCircuit(CircuitSettings settings,
                       RetryPolicy::Jitter jitter = RetryPolicy::RandomJitter());

  Admission Admit(TimePoint now);
  // `probe`: the call was admitted as kProbe.
  CircuitChange OnResult(bool host_failed, bool probe, TimePoint now);

  // Whether the next call would be the probe: open and its wait is over, or the probe that
  // went out was lost (no result within probe_timeout).
  bool ProbeDue(TimePoint now) const;

  CircuitState state() const { return state_; }
  // Host failures in a row: the count towards opening while closed, then every failure since.
  int consecutive_failures() const { return consecutive_failures_; }
  TimePoint opened_at() const { return opened_at_; }          // when it last opened
  TimePoint next_probe_at() const { return next_probe_at_; }  // while open
  Duration probe_wait() const { return probe_wait_; }         // the current (unjittered) wait
  std::uint64_t opens() const { return opens_; }              // times it opened

 private:
  void WaitForProbe(TimePoint now);
  Duration NextWait() const;

  CircuitSettings settings_;
  RetryPolicy::Jitter jitter_;
  CircuitState state_ = CircuitState::kClosed;
  int consecutive_failures_ = 0;
  TimePoint opened_at_;
  TimePoint next_probe_at_;
  TimePoint probe_started_;
  Duration probe_wait_{0};
  std::uint64_t opens_ = 0;
};

}  // namespace settle::engine
