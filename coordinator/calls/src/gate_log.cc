#include "gate_log.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "settle/core/log_text.h"

namespace settle::calls {
namespace {

// How the release after a close is paced, for its log line.
std::string Pace(const engine::HostGateSettings& s) {
  std::string pace = s.release_per_second > 0
                         ? "at up to " + std::to_string(s.release_per_second) + " a second"
                         : "as fast as the cap allows";
  if (s.max_in_flight > 0)
    pace += ", " + std::to_string(s.max_in_flight) + " calls in flight at most";
  return pace;
}

}  // namespace

std::string Approx(Duration d) {
  const auto ms = std::max<Duration::rep>(d.count(), 0);
  if (ms < 1000) return std::to_string(ms) + " ms";
  const auto s = (ms + 500) / 1000;
  if (s < 120) return std::to_string(s) + " s";
  return std::to_string(s / 60) + "m" + (s % 60 == 0 ? "" : std::to_string(s % 60) + "s");
}

std::string HeldDetail(const engine::GateAdmission& admission, const std::string& origin,
                       const engine::HostGateSettings& settings) {
  if (admission.circuit_open) return "not called: the circuit for " + origin + " is open";
  if (admission.releasing) return "not called: waiting its turn in the release of " + origin;
  return "not called: " + std::to_string(settings.max_in_flight) + " calls to " + origin +
         " are in flight";
}

void LogCircuitChange(engine::CircuitChange change, const std::string& origin,
                      const engine::HostGate& gate, const std::string& last_error,
                      const engine::HostGateSettings& settings, TimePoint now) {
  const engine::HostCircuit& c = gate.circuit();
  switch (change) {
    case engine::CircuitChange::kNone:
      return;
    case engine::CircuitChange::kOpened:
      spdlog::warn(
          "circuit for {} open after {} consecutive failures (last: {}): its calls wait, "
          "next probe in {}",
          origin, c.consecutive_failures(), LogValue(last_error), Approx(c.next_probe_at() - now));
      return;
    case engine::CircuitChange::kStillOpen:
      spdlog::warn("circuit for {} still open: the probe failed ({}), next probe in {}", origin,
                   LogValue(last_error), Approx(c.next_probe_at() - now));
      return;
    case engine::CircuitChange::kClosed:
      spdlog::info(
          "circuit for {} closed after {}: the host answered; {} waiting transactions resume {}",
          origin, Approx(now - c.opened_at()), gate.waiting(), Pace(settings));
      return;
  }
}

void LogRetryNowFailed(const std::string& origin, const engine::HostGate& gate,
                       const std::string& gid, const std::string& last_error, TimePoint now) {
  const engine::HostCircuit& c = gate.circuit();
  if (c.state() == engine::CircuitState::kOpen) {
    spdlog::info("circuit for {} stays open: the retry now of gid={} failed ({}), next probe in {}",
                 origin, gid, LogValue(last_error), Approx(c.next_probe_at() - now));
  } else {
    spdlog::info("circuit for {} stays open: the retry now of gid={} failed ({}), a probe is out",
                 origin, gid, LogValue(last_error));
  }
}

void LogReleaseDone(const std::string& origin, const engine::HostGate& gate, TimePoint now) {
  spdlog::info("host {}: the {} transactions that waited for its circuit are released, in {}",
               origin, gate.released(), Approx(now - gate.closed_at()));
}

void LogHostSummary(const std::string& origin, const engine::HostGate& gate, TimePoint now) {
  const engine::HostCircuit& c = gate.circuit();
  if (gate.releasing()) {
    spdlog::info("host {}: {} transactions released since its circuit closed {} ago, {} waiting",
                 origin, gate.released(), Approx(now - gate.closed_at()), gate.waiting());
  } else if (c.state() == engine::CircuitState::kProbing) {
    spdlog::info("circuit for {} open for {}: {} transactions waiting, a probe is out", origin,
                 Approx(now - c.opened_at()), gate.waiting());
  } else {
    spdlog::info("circuit for {} open for {}: {} transactions waiting, next probe in {}", origin,
                 Approx(now - c.opened_at()), gate.waiting(), Approx(c.next_probe_at() - now));
  }
}

}  // namespace settle::calls
