#include "settle/engine/host_circuit.h"

#include <algorithm>

namespace settle::engine {

std::string_view ToString(CircuitState state) {
  switch (state) {
    case CircuitState::kClosed:
      return "closed";
    case CircuitState::kOpen:
      return "open";
    case CircuitState::kProbing:
      return "probing";
  }
  return "closed";
}

bool HostFailed(const BranchOutcome& outcome) {
  if (outcome.result != BranchResult::kUnknown) return false;
  return outcome.http_status == 0 || outcome.http_status >= 500;
}

HostCircuit::HostCircuit(CircuitSettings settings, RetryPolicy::Jitter jitter)
    : settings_(settings), jitter_(std::move(jitter)) {
  settings_.probe_max = std::max(settings_.probe_max, Duration(1));
  settings_.probe_initial = std::clamp(settings_.probe_initial, Duration(1), settings_.probe_max);
}

Duration HostCircuit::NextWait() const { return std::min(probe_wait_ * 2, settings_.probe_max); }

void HostCircuit::WaitForProbe(TimePoint now) {
  state_ = CircuitState::kOpen;
  const auto jittered = Duration(static_cast<Duration::rep>(probe_wait_.count() * jitter_()));
  next_probe_at_ = now + std::clamp(jittered, Duration(1), settings_.probe_max);
}

bool HostCircuit::ProbeDue(TimePoint now) const {
  switch (state_) {
    case CircuitState::kClosed:
      return false;
    case CircuitState::kOpen:
      return now >= next_probe_at_;
    case CircuitState::kProbing:
      return now >= probe_started_ + settings_.probe_timeout;
  }
  return false;
}

Admission HostCircuit::Admit(TimePoint now) {
  switch (state_) {
    case CircuitState::kClosed:
      return {};
    case CircuitState::kOpen:
      if (now < next_probe_at_) return {Admission::Kind::kWait, next_probe_at_};
      break;
    case CircuitState::kProbing: {
      const TimePoint given_up = probe_started_ + settings_.probe_timeout;
      if (now < given_up) {
        // If the probe fails, the next one is due about a longer wait after it.
        const TimePoint next = probe_started_ + NextWait();
        return {Admission::Kind::kWait, next > now ? std::min(next, given_up) : given_up};
      }
      break;  // the probe is lost: this call is the next one
    }
  }
  state_ = CircuitState::kProbing;
  probe_started_ = now;
  return {Admission::Kind::kProbe, now};
}

CircuitChange HostCircuit::OnResult(bool host_failed, bool probe, TimePoint now) {
  if (!host_failed) {
    consecutive_failures_ = 0;
    if (state_ == CircuitState::kClosed) return CircuitChange::kNone;
    state_ = CircuitState::kClosed;
    probe_wait_ = Duration(0);
    return CircuitChange::kClosed;
  }
  ++consecutive_failures_;
  switch (state_) {
    case CircuitState::kClosed:
      if (settings_.failures <= 0 || consecutive_failures_ < settings_.failures) {
        return CircuitChange::kNone;
      }
      ++opens_;
      opened_at_ = now;
      probe_wait_ = settings_.probe_initial;
      WaitForProbe(now);
      return CircuitChange::kOpened;
    case CircuitState::kProbing:
      if (!probe) return CircuitChange::kNone;
      probe_wait_ = NextWait();
      WaitForProbe(now);
      return CircuitChange::kStillOpen;
    case CircuitState::kOpen:
      return CircuitChange::kNone;
  }
  return CircuitChange::kNone;
}

}  // namespace settle::engine
