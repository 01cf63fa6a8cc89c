#pragma once

#include <string>

#include "settle/core/clock.h"
#include "settle/engine/host_gate.h"

// What the participant hosts' gates tell the log and the held calls: the narration of
// HostGatedCaller, apart from its admitting and recording. Lines are for the host, not per
// call (host_gated_caller.h).
namespace settle::calls {

// A wait as people read it in a log line: "800 ms", "8 s", "2m30s".
std::string Approx(Duration d);

// The detail of a call the gate of `origin` held: why it was not called.
std::string HeldDetail(const engine::GateAdmission& admission, const std::string& origin,
                       const engine::HostGateSettings& settings);

// The line of a change of `origin`'s circuit, after a call that ended with `last_error`.
void LogCircuitChange(engine::CircuitChange change, const std::string& origin,
                      const engine::HostGate& gate, const std::string& last_error,
                      const engine::HostGateSettings& settings, TimePoint now);

// An operator's Retry now of `gid` whose call to `origin` failed while its circuit is open:
// the circuit stays as it was.
void LogRetryNowFailed(const std::string& origin, const engine::HostGate& gate,
                       const std::string& gid, const std::string& last_error, TimePoint now);

// The end of the release after `origin`'s circuit closed.
void LogReleaseDone(const std::string& origin, const engine::HostGate& gate, TimePoint now);

// Where an open or releasing host stands: its periodic summary.
void LogHostSummary(const std::string& origin, const engine::HostGate& gate, TimePoint now);

}  // namespace settle::calls
