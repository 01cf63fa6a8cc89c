#include "settle/calls/host_gated_caller.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "gate_log.h"
#include "not_sent.h"
#include "settle/core/ascii.h"
#include "settle/core/grpc_target.h"
#include "settle/core/url.h"
#include "settle/core/url_origin.h"

namespace settle::calls {

std::string OriginOf(const std::string& url) { return UrlOrigin(url); }

std::string GateKeyOf(const std::string& host) {
  return host == HostGatedCaller::kOverflowHost ? host : OriginOf(host);
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

bool HostGatedCaller::Overflows(const std::string& origin) const {
  if (hosts_.contains(origin)) return false;
  const std::size_t cap = settings_.max_hosts;
  const std::size_t own = hosts_.size() - (hosts_.contains(kOverflowHost) ? 1 : 0);
  // The overflow gate takes the last place, so that there are at most `cap` in all.
  return cap != 0 && own + 1 >= cap;
}

const std::string& HostGatedCaller::GateKey(const Admitted& call) {
  static const std::string overflow(kOverflowHost);
  return call.overflow ? overflow : call.origin;
}

HostGatedCaller::Host& HostGatedCaller::HostOf(const std::string& gate) {
  auto it = hosts_.find(gate);
  if (it == hosts_.end())
    it = hosts_.emplace(gate, Host{engine::HostGate(settings_, jitter_), {}, clock_.Now()}).first;
  return it->second;
}

void HostGatedCaller::NoteActive(const std::string& gate, const Host& host) {
  if (host.gate.waiting() > 0 || host.gate.releasing()) {
    active_.insert(gate);
  } else {
    active_.erase(gate);
  }
  holding_.store(!active_.empty(), std::memory_order_relaxed);
}

void HostGatedCaller::NoteOverflowOrigin(const std::string& gid, const std::string& origin) {
  std::vector<std::string>& origins = overflow_origins_[gid];
  if (std::find(origins.begin(), origins.end(), origin) == origins.end()) {
    origins.push_back(origin);
  }
}

void HostGatedCaller::Prune(TimePoint now) {
  for (auto it = hosts_.begin(); it != hosts_.end();) {
    const engine::HostGate& gate = it->second.gate;
    const bool idle = gate.waiting() == 0 && gate.in_flight() == 0 && !gate.releasing() &&
                      now - it->second.last_used >= settings_.idle_after;
    if (!idle) {
      ++it;
      continue;
    }
    active_.erase(it->first);
    it = hosts_.erase(it);
    ++pruned_;
  }
  holding_.store(!active_.empty(), std::memory_order_relaxed);
  std::erase_if(retry_now_, [now](const auto& entry) { return entry.second <= now; });
  if (const auto overflow = hosts_.find(kOverflowHost); overflow != hosts_.end()) {
    std::erase_if(overflow_origins_, [&overflow](const auto& entry) {
      return !overflow->second.gate.Holds(entry.first);
    });
  } else {
    overflow_origins_.clear();
  }
}

std::uint64_t HostGatedCaller::pruned() const {
  const std::lock_guard lock(mu_);
  return pruned_;
}

void HostGatedCaller::TakeWoken(const std::string& gate, Host& host, TimePoint now,
                                std::vector<std::string>& woken) {
  const bool was_releasing = host.gate.releasing();
  const bool overflow = gate == kOverflowHost;
  for (std::string& gid : host.gate.TakeWoken(now)) {
    host.last_used = now;  // its pass is coming to call
    std::vector<std::string>& released = released_[gid];
    if (overflow) {
      // The hosts its calls were bound for: the rows its pass makes due now.
      if (auto it = overflow_origins_.find(gid); it != overflow_origins_.end()) {
        for (std::string& origin : it->second) released.push_back(std::move(origin));
        overflow_origins_.erase(it);
      }
    } else {
      released.push_back(gate);
    }
    woken.push_back(std::move(gid));
  }
  released_size_.store(released_.size(), std::memory_order_relaxed);
  NoteActive(gate, host);
  Summarize(gate, host, now, was_releasing);
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
    // Only the gates that hold or release transactions: TakeWoken may take one out of active_.
    const std::vector<std::string> active(active_.begin(), active_.end());
    for (const std::string& gate : active) {
      auto it = hosts_.find(gate);
      if (it == hosts_.end()) {
        active_.erase(gate);
        holding_.store(!active_.empty(), std::memory_order_relaxed);
        continue;
      }
      TakeWoken(gate, it->second, now, woken);
    }
    if (now - last_prune_ >= kPruneEvery || now < last_prune_) {
      last_prune_ = now;
      Prune(now);
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
  if (admission.made == 0) co_return std::move(admission.outcomes);
  std::vector<engine::BranchCall> made;
  if (admission.made == calls.size()) {
    made = std::move(calls);
  } else {
    made.reserve(admission.made);
    for (std::size_t i = 0; i < calls.size(); ++i) {
      if (admission.calls[i].made) made.push_back(std::move(calls[i]));
    }
  }
  std::vector<engine::BranchOutcome> results = co_await inner_.CallAll(std::move(made));
  Wake(Record(admission, std::move(results)));
  co_return std::move(admission.outcomes);
}

HostGatedCaller::Admission HostGatedCaller::Admit(const std::vector<engine::BranchCall>& calls) {
  Admission a;
  a.outcomes.resize(calls.size());
  a.calls.resize(calls.size());
  const TimePoint now = clock_.Now();
  const std::lock_guard lock(mu_);
  // A Retry now is for the calls of one CallAll: the pass's first round with calls.
  std::vector<std::string> retried;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    Admitted& call = a.calls[i];
    call.origin = OriginOf(calls[i].url);
    // A call its caller will not send (not_sent.h) passes no gate: it says nothing of the host.
    if (!call.origin.empty() && !WhyNotSent(calls[i]).empty()) call.origin.clear();
    if (call.origin.empty()) {
      call.made = true;
      ++a.made;
      continue;
    }
    call.overflow = Overflows(call.origin);
    const std::string& gate = GateKey(call);
    Host& host = HostOf(gate);
    host.last_used = now;
    const bool forced = RetryNowPending(calls[i].gid, now);
    if (forced) retried.push_back(calls[i].gid);
    const engine::GateAdmission admission =
        host.gate.Admit(calls[i].gid, calls[i].created, now, forced);
    NoteActive(gate, host);
    if (admission.kind == engine::GateAdmission::Kind::kHeld) {
      if (call.overflow) NoteOverflowOrigin(calls[i].gid, call.origin);
      engine::BranchOutcome& held = a.outcomes[i];
      held.not_called_until = admission.until;
      held.circuit_open = admission.circuit_open;
      held.detail = HeldDetail(admission, gate, settings_);
      continue;
    }
    if (call.overflow) overflow_origins_.erase(calls[i].gid);
    call.probe = admission.kind == engine::GateAdmission::Kind::kProbe;
    call.forced = admission.kind == engine::GateAdmission::Kind::kForced;
    if (call.probe) spdlog::debug("circuit for {}: gid={} is the probe", call.origin, calls[i].gid);
    if (call.forced) {
      spdlog::info("circuit for {} is {}: gid={} calls it now (retry now)", call.origin,
                   engine::ToString(host.gate.circuit().state()), calls[i].gid);
    }
    call.made = true;
    call.gid = calls[i].gid;
    call.created = calls[i].created;
    ++a.made;
  }
  for (const std::string& gid : retried) retry_now_.erase(gid);
  return a;
}

bool HostGatedCaller::RetryNowPending(const std::string& gid, TimePoint now) const {
  if (retry_now_.empty()) return false;
  auto it = retry_now_.find(gid);
  return it != retry_now_.end() && now < it->second;
}

std::vector<std::string> HostGatedCaller::Record(Admission& admission,
                                                 std::vector<engine::BranchOutcome> results) {
  std::vector<std::string> woken;
  const TimePoint now = clock_.Now();
  const std::lock_guard lock(mu_);
  std::size_t k = 0;  // the results are the made calls', in order
  for (std::size_t i = 0; i < admission.calls.size(); ++i) {
    const Admitted& call = admission.calls[i];
    if (!call.made) continue;
    engine::BranchOutcome& outcome = admission.outcomes[i];
    outcome = std::move(results[k++]);
    if (call.origin.empty()) continue;
    const std::string& gate = GateKey(call);
    Host& host = HostOf(gate);
    host.last_used = now;
    const bool failed = engine::HostFailed(outcome);
    const bool was_closed = host.gate.circuit().state() == engine::CircuitState::kClosed;
    const engine::CircuitChange change =
        host.gate.OnResult(call.gid, call.created, failed, call.probe, now);
    if (change == engine::CircuitChange::kOpened || change == engine::CircuitChange::kClosed) {
      host.last_summary = now;
    }
    LogCircuitChange(change, gate, host.gate, outcome.detail, settings_, now);
    if (call.forced && failed && change == engine::CircuitChange::kNone) {
      LogRetryNowFailed(gate, host.gate, call.gid, outcome.detail, now);
    }
    outcome.circuit_open = failed && !was_closed;
    if (call.overflow && host.gate.Holds(call.gid)) NoteOverflowOrigin(call.gid, call.origin);
    TakeWoken(gate, host, now, woken);
  }
  return woken;
}

void HostGatedCaller::RetryNow(const std::string& gid) {
  const TimePoint now = clock_.Now();
  const std::lock_guard lock(mu_);
  retry_now_[gid] = now + kRetryNowFor;
}

Result<std::string> HostGatedCaller::RetryHost(const std::string& host) {
  std::string gid;
  {
    const TimePoint now = clock_.Now();
    const std::lock_guard lock(mu_);
    auto it = hosts_.find(host);
    if (it == hosts_.end()) {
      return Status::NotFound("host " + host + " has no gate: settled made no call to it lately");
    }
    Host& h = it->second;
    std::optional<std::string> oldest = h.gate.TakeOldest();
    if (!oldest) return Status::Conflict("no transaction waits for host " + host);
    gid = std::move(*oldest);
    h.last_used = now;
    std::vector<std::string>& released = released_[gid];
    if (host == kOverflowHost) {
      if (auto o = overflow_origins_.find(gid); o != overflow_origins_.end()) {
        for (std::string& origin : o->second) released.push_back(std::move(origin));
        overflow_origins_.erase(o);
      }
    } else {
      released.push_back(host);
    }
    released_size_.store(released_.size(), std::memory_order_relaxed);
    retry_now_[gid] = now + kRetryNowFor;
    NoteActive(host, h);
  }
  spdlog::info("host {}: retry now: gid={} calls it at once", host, gid);
  Wake({gid});
  return gid;
}

void HostGatedCaller::Forget(const std::string& gid) {
  if (!holding_.load(std::memory_order_relaxed)) return;
  const std::lock_guard lock(mu_);
  const std::vector<std::string> active(active_.begin(), active_.end());
  for (const std::string& gate : active) {
    auto it = hosts_.find(gate);
    if (it == hosts_.end() || !it->second.gate.Forget(gid)) continue;
    if (gate == kOverflowHost) overflow_origins_.erase(gid);
    NoteActive(gate, it->second);
  }
}

std::optional<HeldView> HostGatedCaller::HeldBy(const std::string& gid) const {
  if (!holding_.load(std::memory_order_relaxed)) return std::nullopt;
  const std::lock_guard lock(mu_);
  for (const std::string& gate : active_) {
    auto it = hosts_.find(gate);
    if (it == hosts_.end() || !it->second.gate.Holds(gid)) continue;
    const engine::HostGate& g = it->second.gate;
    const engine::HostCircuit& c = g.circuit();
    HeldView view{gate, c.state(), {}, std::nullopt};
    if (c.state() == engine::CircuitState::kOpen) {
      view.reason = "circuit_open";
      view.next_try_at = c.next_probe_at();
    } else if (c.state() == engine::CircuitState::kProbing) {
      view.reason = "probe_out";
    } else if (g.releasing()) {
      view.reason = "releasing";
    } else {
      view.reason = "cap";
    }
    return view;
  }
  return std::nullopt;
}

bool HostGatedCaller::Holds(const std::string& gid) const {
  const std::lock_guard lock(mu_);
  // Only a gate that holds transactions can hold this one.
  for (const std::string& gate : active_) {
    auto it = hosts_.find(gate);
    if (it != hosts_.end() && it->second.gate.Holds(gid)) return true;
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
