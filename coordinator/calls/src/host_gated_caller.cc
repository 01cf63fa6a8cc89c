#include "settle/calls/host_gated_caller.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "settle/core/url.h"

namespace settle::coordinator {
namespace {

// A wait as people read it in a log line: "800 ms", "8 s", "2m30s".
std::string Approx(Duration d) {
  const auto ms = std::max<Duration::rep>(d.count(), 0);
  if (ms < 1000) return std::to_string(ms) + " ms";
  const auto s = (ms + 500) / 1000;
  if (s < 120) return std::to_string(s) + " s";
  return std::to_string(s / 60) + "m" + (s % 60 == 0 ? "" : std::to_string(s % 60) + "s");
}

// How the release after a close is paced, for its log line.
std::string Pace(const HostGateSettings& s) {
  std::string pace = s.release_per_second > 0
                         ? "at up to " + std::to_string(s.release_per_second) + " a second"
                         : "as fast as the cap allows";
  if (s.max_in_flight > 0)
    pace += ", " + std::to_string(s.max_in_flight) + " calls in flight at most";
  return pace;
}

}  // namespace

std::string HostGatedCaller::OriginOf(const std::string& url) {
  Result<Url> parsed = ParseUrl(url);
  return parsed ? parsed->Origin() : std::string();
}

HostGatedCaller::HostGatedCaller(BranchCaller& inner, const Clock& clock, HostGateSettings settings,
                                 RetryPolicy::Jitter jitter)
    : inner_(inner), clock_(clock), settings_(settings), jitter_(std::move(jitter)) {}

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
  if (it == hosts_.end()) it = hosts_.emplace(origin, Host{HostGate(settings_, jitter_), {}}).first;
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
  const HostGate& gate = host.gate;
  if (was_releasing && !gate.releasing()) {
    spdlog::info("host {}: the {} transactions that waited for its circuit are released, in {}",
                 origin, gate.released(), Approx(now - gate.closed_at()));
    return;
  }
  const HostCircuit& c = gate.circuit();
  const bool open = c.state() != CircuitState::kClosed;
  if (!open && !gate.releasing()) return;
  if (now - host.last_summary < kSummaryEvery) return;
  host.last_summary = now;
  if (gate.releasing()) {
    spdlog::info("host {}: {} transactions released since its circuit closed {} ago, {} waiting",
                 origin, gate.released(), Approx(now - gate.closed_at()), gate.waiting());
  } else if (c.state() == CircuitState::kProbing) {
    spdlog::info("circuit for {} open for {}: {} transactions waiting, a probe is out", origin,
                 Approx(now - c.opened_at()), gate.waiting());
  } else {
    spdlog::info("circuit for {} open for {}: {} transactions waiting, next probe in {}", origin,
                 Approx(now - c.opened_at()), gate.waiting(), Approx(c.next_probe_at() - now));
  }
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

asio::awaitable<std::vector<BranchOutcome>> HostGatedCaller::CallAll(
    std::vector<BranchCall> calls) {
  if (settings_.circuit.failures <= 0 && settings_.max_in_flight <= 0) {
    std::vector<BranchOutcome> direct = co_await inner_.CallAll(std::move(calls));
    co_return direct;
  }
  std::vector<BranchOutcome> outcomes(calls.size());
  std::vector<std::string> origins(calls.size());
  std::vector<bool> probes(calls.size(), false);
  std::vector<std::size_t> admitted;  // indexes into calls of the calls made
  {
    const TimePoint now = clock_.Now();
    const std::lock_guard lock(mu_);
    for (std::size_t i = 0; i < calls.size(); ++i) {
      origins[i] = OriginOf(calls[i].url);
      if (origins[i].empty()) {
        admitted.push_back(i);
        continue;
      }
      Host& host = HostOf(origins[i]);
      const GateAdmission admission = host.gate.Admit(calls[i].gid, calls[i].created, now);
      if (admission.kind == GateAdmission::Kind::kHeld) {
        BranchOutcome& held = outcomes[i];
        held.not_called_until = admission.until;
        held.circuit_open = admission.circuit_open;
        if (admission.circuit_open) {
          held.detail = "not called: the circuit for " + origins[i] + " is open";
        } else if (admission.releasing) {
          held.detail = "not called: waiting its turn in the release of " + origins[i];
        } else {
          held.detail = "not called: " + std::to_string(settings_.max_in_flight) + " calls to " +
                        origins[i] + " are in flight";
        }
        continue;
      }
      probes[i] = admission.kind == GateAdmission::Kind::kProbe;
      if (probes[i]) spdlog::debug("circuit for {}: gid={} is the probe", origins[i], calls[i].gid);
      admitted.push_back(i);
    }
  }
  if (admitted.empty()) co_return outcomes;

  std::vector<BranchCall> made;
  std::vector<std::string> made_gids;  // the calls are moved into `made`
  made.reserve(admitted.size());
  made_gids.reserve(admitted.size());
  for (std::size_t i : admitted) {
    made_gids.push_back(calls[i].gid);
    made.push_back(std::move(calls[i]));
  }
  std::vector<BranchOutcome> results = co_await inner_.CallAll(std::move(made));

  std::vector<std::string> woken;  // transactions the ended calls wake
  {
    const TimePoint now = clock_.Now();
    const std::lock_guard lock(mu_);
    for (std::size_t k = 0; k < admitted.size(); ++k) {
      const std::size_t i = admitted[k];
      BranchOutcome& outcome = outcomes[i];
      outcome = std::move(results[k]);
      if (origins[i].empty()) continue;
      Host& host = HostOf(origins[i]);
      const HostCircuit& c = host.gate.circuit();
      const bool failed = HostFailed(outcome);
      const bool was_closed = c.state() == CircuitState::kClosed;
      switch (host.gate.OnResult(made_gids[k], calls[i].created, failed, probes[i], now)) {
        case CircuitChange::kNone:
          break;
        case CircuitChange::kOpened:
          host.last_summary = now;
          spdlog::warn(
              "circuit for {} open after {} consecutive failures (last: {}): its calls wait, "
              "next probe in {}",
              origins[i], c.consecutive_failures(), outcome.detail,
              Approx(c.next_probe_at() - now));
          break;
        case CircuitChange::kStillOpen:
          spdlog::warn("circuit for {} still open: the probe failed ({}), next probe in {}",
                       origins[i], outcome.detail, Approx(c.next_probe_at() - now));
          break;
        case CircuitChange::kClosed:
          host.last_summary = now;
          spdlog::info(
              "circuit for {} closed after {}: the host answered; {} waiting "
              "transactions resume {}",
              origins[i], Approx(now - c.opened_at()), host.gate.waiting(), Pace(settings_));
          break;
      }
      outcome.circuit_open = failed && !was_closed;
      TakeWoken(origins[i], host, now, woken);
    }
  }
  Wake(woken);
  co_return outcomes;
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
      const HostGate& g = host.gate;
      const HostCircuit& c = g.circuit();
      const bool open = c.state() != CircuitState::kClosed;
      views.push_back({origin, c.state(), c.opens(), g.waiting(), g.in_flight(), g.held_at_cap(),
                       g.releasing(), open ? now - c.opened_at() : Duration(0),
                       c.state() == CircuitState::kOpen
                           ? std::max(c.next_probe_at() - now, Duration(0))
                           : Duration(0),
                       g.OldestWaiting(kOldestShown)});
    }
  }
  std::sort(views.begin(), views.end(),
            [](const HostView& a, const HostView& b) { return a.host < b.host; });
  return views;
}

}  // namespace settle::coordinator
