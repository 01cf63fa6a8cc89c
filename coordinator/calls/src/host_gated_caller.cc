#include "settle/calls/host_gated_caller.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "gate_log.h"
#include "not_sent.h"
#include "settle/core/grpc_target.h"
#include "settle/core/url.h"

namespace settle::calls {

std::string OriginOf(const std::string& url) {
  if (LooksLikeGrpcTarget(url)) {
    Result<GrpcTarget> target = ParseGrpcTarget(url);
    return target ? target->Origin() : std::string();
  }
  Result<Url> parsed = ParseUrl(url);
  return parsed ? parsed->Origin() : std::string();
}

HostGatedCaller::HostGatedCaller(BranchCaller& inner, const Clock& clock,
                                 engine::HostGateSettings settings, OnWake on_wake,
                                 engine::RetryPolicy::Jitter jitter)
    : inner_(inner),
      clock_(clock),
      settings_(settings),
      on_wake_(std::move(on_wake)),
      jitter_(std::move(jitter)) {}

std::vector<std::string> HostGatedCaller::TakeReleased(const std::string& gid) {
  // A gid woken before this pass was scheduled: its entry is visible here (the scheduler's
  // lock orders the two).
  if (released_size_.load(std::memory_order_relaxed) == 0) return {};
  const std::lock_guard lock(mu_);
  auto it = released_.find(gid);
  if (it == released_.end()) return {};
  std::vector<std::string> origins = std::move(it->second);
  released_.erase(it);
  released_size_.store(released_.size(), std::memory_order_relaxed);
  return origins;
}

HostGatedCaller::Host& HostGatedCaller::HostOf(const std::string& origin) {
  auto it = hosts_.find(origin);
  if (it == hosts_.end())
    it = hosts_.emplace(origin, Host{engine::HostGate(settings_, jitter_), {}}).first;
  return it->second;
}

void HostGatedCaller::TakeWoken(const std::string& origin, Host& host, TimePoint now,
                                std::vector<std::string>& woken) {
  const bool was_releasing = host.gate.releasing();
  for (std::string& gid : host.gate.TakeWoken(now)) {
    released_[gid].push_back(origin);
    woken.push_back(std::move(gid));
  }
  released_size_.store(released_.size(), std::memory_order_relaxed);
  Summarize(origin, host, now, was_releasing);
}

void HostGatedCaller::Summarize(const std::string& origin, Host& host, TimePoint now,
                                bool was_releasing) {
  const engine::HostGate& gate = host.gate;
  if (was_releasing && !gate.releasing()) {
    LogReleaseDone(origin, gate, now);
    return;
  }
  const bool open = gate.circuit().state() != engine::CircuitState::kClosed;
  if (!open && !gate.releasing()) return;
  if (now - host.last_summary < kSummaryEvery) return;
  host.last_summary = now;
  LogHostSummary(origin, gate, now);
}

void HostGatedCaller::Wake(const std::vector<std::string>& gids) const {
  if (!gids.empty() && on_wake_) on_wake_(gids);
}

void HostGatedCaller::Tick() {
  std::vector<std::string> woken;
  {
    const TimePoint now = clock_.Now();
    const std::lock_guard lock(mu_);
    for (auto& [origin, host] : hosts_) {
      if (host.gate.waiting() == 0 && !host.gate.releasing()) continue;
      TakeWoken(origin, host, now, woken);
    }
  }
  Wake(woken);
}

asio::awaitable<std::vector<engine::BranchOutcome>> HostGatedCaller::CallAll(
    std::vector<engine::BranchCall> calls) {
  if (settings_.circuit.failures <= 0 && settings_.max_in_flight <= 0) {
    std::vector<engine::BranchOutcome> direct = co_await inner_.CallAll(std::move(calls));
    co_return direct;
  }
  Admission admission = Admit(calls);
  if (admission.made.empty()) co_return std::move(admission.outcomes);
  std::vector<engine::BranchCall> made;
  made.reserve(admission.made.size());
  for (std::size_t i : admission.made) made.push_back(std::move(calls[i]));
  std::vector<engine::BranchOutcome> results = co_await inner_.CallAll(std::move(made));
  Wake(Record(admission, std::move(results)));
  co_return std::move(admission.outcomes);
}

HostGatedCaller::Admission HostGatedCaller::Admit(const std::vector<engine::BranchCall>& calls) {
  Admission a;
  a.outcomes.resize(calls.size());
  a.origins.resize(calls.size());
  a.probes.assign(calls.size(), false);
  const TimePoint now = clock_.Now();
  const std::lock_guard lock(mu_);
  for (std::size_t i = 0; i < calls.size(); ++i) {
    a.origins[i] = OriginOf(calls[i].url);
    // A call its caller will not send (not_sent.h) passes no gate: it says nothing of the host.
    if (!a.origins[i].empty() && !WhyNotSent(calls[i]).empty()) a.origins[i].clear();
    if (a.origins[i].empty()) {
      a.made.push_back(i);
      a.made_gids.push_back(calls[i].gid);
      a.made_created.push_back(calls[i].created);
      continue;
    }
    const engine::GateAdmission admission =
        HostOf(a.origins[i]).gate.Admit(calls[i].gid, calls[i].created, now);
    if (admission.kind == engine::GateAdmission::Kind::kHeld) {
      engine::BranchOutcome& held = a.outcomes[i];
      held.not_called_until = admission.until;
      held.circuit_open = admission.circuit_open;
      held.detail = HeldDetail(admission, a.origins[i], settings_);
      continue;
    }
    a.probes[i] = admission.kind == engine::GateAdmission::Kind::kProbe;
    if (a.probes[i])
      spdlog::debug("circuit for {}: gid={} is the probe", a.origins[i], calls[i].gid);
    a.made.push_back(i);
    a.made_gids.push_back(calls[i].gid);
    a.made_created.push_back(calls[i].created);
  }
  return a;
}

std::vector<std::string> HostGatedCaller::Record(Admission& admission,
                                                 std::vector<engine::BranchOutcome> results) {
  std::vector<std::string> woken;
  const TimePoint now = clock_.Now();
  const std::lock_guard lock(mu_);
  for (std::size_t k = 0; k < admission.made.size(); ++k) {
    const std::size_t i = admission.made[k];
    engine::BranchOutcome& outcome = admission.outcomes[i];
    outcome = std::move(results[k]);
    const std::string& origin = admission.origins[i];
    if (origin.empty()) continue;
    Host& host = HostOf(origin);
    const bool failed = engine::HostFailed(outcome);
    const bool was_closed = host.gate.circuit().state() == engine::CircuitState::kClosed;
    const engine::CircuitChange change = host.gate.OnResult(
        admission.made_gids[k], admission.made_created[k], failed, admission.probes[i], now);
    if (change == engine::CircuitChange::kOpened || change == engine::CircuitChange::kClosed) {
      host.last_summary = now;
    }
    LogCircuitChange(change, origin, host.gate, outcome.detail, settings_, now);
    outcome.circuit_open = failed && !was_closed;
    TakeWoken(origin, host, now, woken);
  }
  return woken;
}

bool HostGatedCaller::Holds(const std::string& gid) const {
  const std::lock_guard lock(mu_);
  for (const auto& [origin, host] : hosts_) {
    if (host.gate.Holds(gid)) return true;
  }
  return false;
}

std::vector<HostView> HostGatedCaller::Hosts() const {
  std::vector<HostView> views;
  {
    const TimePoint now = clock_.Now();
    const std::lock_guard lock(mu_);
    views.reserve(hosts_.size());
    for (const auto& [origin, host] : hosts_) {
      const engine::HostGate& g = host.gate;
      const engine::HostCircuit& c = g.circuit();
      const bool open = c.state() != engine::CircuitState::kClosed;
      views.push_back({origin, c.state(), c.opens(), g.waiting(), g.in_flight(), g.held_at_cap(),
                       g.releasing(), open ? now - c.opened_at() : Duration(0),
                       c.state() == engine::CircuitState::kOpen
                           ? std::max(c.next_probe_at() - now, Duration(0))
                           : Duration(0),
                       g.OldestWaiting(kOldestShown)});
    }
  }
  std::sort(views.begin(), views.end(),
            [](const HostView& a, const HostView& b) { return a.host < b.host; });
  return views;
}

}  // namespace settle::calls
