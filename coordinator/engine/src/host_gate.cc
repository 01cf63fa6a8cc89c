#include "settle/engine/host_gate.h"

#include <algorithm>
#include <chrono>
#include <limits>

namespace settle::engine {

HostGate::HostGate(HostGateSettings settings, RetryPolicy::Jitter jitter)
    : settings_(settings), jitter_(jitter), circuit_(settings.circuit, std::move(jitter)) {}

void HostGate::Wait(const std::string& gid, TimePoint created) {
  if (waiting_.emplace(gid, created).second) queue_.emplace(created, gid);
}

GateAdmission HostGate::Hold(const std::string& gid, TimePoint created, TimePoint now,
                             bool circuit_open, bool releasing) {
  Wait(gid, created);
  const auto hold = Duration(static_cast<Duration::rep>(settings_.hold.count() * jitter_()));
  return {GateAdmission::Kind::kHeld, circuit_open, releasing, now + std::max(hold, Duration(1))};
}

std::string HostGate::PopOldest() {
  auto oldest = queue_.begin();
  std::string gid = std::move(oldest->second);
  queue_.erase(oldest);
  waiting_.erase(gid);
  return gid;
}

std::size_t HostGate::FreeSlots(TimePoint now) {
  if (settings_.max_in_flight <= 0) return std::numeric_limits<std::size_t>::max();
  std::erase_if(reserved_, [now](const auto& r) { return r.second <= now; });
  const auto taken = static_cast<std::size_t>(in_flight_) + reserved_.size();
  const auto cap = static_cast<std::size_t>(settings_.max_in_flight);
  return taken >= cap ? 0 : cap - taken;
}

std::optional<std::string> HostGate::TakeOldest() {
  if (queue_.empty()) return std::nullopt;
  return PopOldest();
}

bool HostGate::Forget(const std::string& gid) {
  reserved_.erase(gid);
  auto it = waiting_.find(gid);
  if (it == waiting_.end()) return false;
  queue_.erase({it->second, gid});
  waiting_.erase(it);
  if (waiting_.empty()) releasing_ = false;
  return true;
}

std::vector<std::string> HostGate::OldestWaiting(std::size_t n) const {
  std::vector<std::string> gids;
  for (auto it = queue_.begin(); it != queue_.end() && gids.size() < n; ++it) {
    gids.push_back(it->second);
  }
  return gids;
}

GateAdmission HostGate::Admit(const std::string& gid, TimePoint created, TimePoint now,
                              bool forced) {
  // A woken transaction's call takes the slot it was woken for.
  if (!reserved_.empty()) reserved_.erase(gid);
  GateAdmission::Kind kind = GateAdmission::Kind::kCall;
  if (forced && circuit_.state() != CircuitState::kClosed) {
    // Not the circuit's probe: the circuit's own schedule stays as it is.
    kind = GateAdmission::Kind::kForced;
  } else {
    const Admission admission = circuit_.Admit(now);
    if (admission.kind == Admission::Kind::kWait) return Hold(gid, created, now, true, false);
    if (admission.kind == Admission::Kind::kProbe) kind = GateAdmission::Kind::kProbe;
  }
  const bool probe = kind == GateAdmission::Kind::kProbe;
  if (!probe) {
    // Waiting for its turn in the release and not woken: it keeps its place in the queue.
    if (releasing_ && !forced && waiting_.contains(gid)) {
      return Hold(gid, created, now, false, true);
    }
    if (FreeSlots(now) == 0) {
      ++held_at_cap_;
      return Hold(gid, created, now, false, false);
    }
  }
  if (!waiting_.empty()) {
    if (auto it = waiting_.find(gid); it != waiting_.end()) {
      queue_.erase({it->second, gid});
      waiting_.erase(it);
    }
  }
  ++in_flight_;
  return {kind, false, false, {}};
}

CircuitChange HostGate::OnResult(const std::string& gid, TimePoint created, bool host_failed,
                                 bool probe, TimePoint now) {
  if (in_flight_ > 0) --in_flight_;
  const CircuitChange change = circuit_.OnResult(host_failed, probe, now);
  switch (change) {
    case CircuitChange::kClosed:
      closed_at_ = now;
      released_ = 0;
      releasing_ = !waiting_.empty();
      tokens_ = 1;  // the first one at once
      refilled_at_ = now;
      break;
    case CircuitChange::kOpened:
    case CircuitChange::kStillOpen:
      releasing_ = false;
      next_probe_wake_ = circuit_.next_probe_at();
      break;
    case CircuitChange::kNone:
      break;
  }
  if (host_failed && circuit_.state() != CircuitState::kClosed) Wait(gid, created);
  return change;
}

std::vector<std::string> HostGate::TakeWoken(TimePoint now) {
  std::vector<std::string> woken;
  if (waiting_.empty()) {
    releasing_ = false;
    return woken;
  }
  if (circuit_.state() != CircuitState::kClosed) {
    // The oldest waiting transaction goes to be the probe; another if it has not come within
    // the grace (it may have finished without calling this host).
    if (circuit_.ProbeDue(now) && now >= next_probe_wake_) {
      woken.push_back(PopOldest());
      next_probe_wake_ = now + settings_.wake_grace;
    }
    return woken;
  }
  const bool paced = releasing_ && settings_.release_per_second > 0;
  if (paced) {
    const double rate = settings_.release_per_second;
    const double burst = std::max(1.0, rate / 10);
    const double seconds = std::chrono::duration<double>(now - refilled_at_).count();
    tokens_ = std::min(burst, tokens_ + rate * std::max(seconds, 0.0));
    refilled_at_ = now;
  }
  const bool capped = settings_.max_in_flight > 0;
  for (std::size_t free = FreeSlots(now); free > 0 && !waiting_.empty(); --free) {
    if (paced) {
      if (tokens_ < 1) break;
      tokens_ -= 1;
    }
    std::string gid = PopOldest();
    if (capped) reserved_[gid] = now + settings_.wake_grace;
    if (releasing_) ++released_;
    woken.push_back(std::move(gid));
  }
  if (waiting_.empty()) releasing_ = false;
  return woken;
}

}  // namespace settle::engine
