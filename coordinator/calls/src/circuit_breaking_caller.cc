#include "settle/calls/circuit_breaking_caller.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "settle/net/url.h"

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

}  // namespace

std::string CircuitBreakingCaller::OriginOf(const std::string& url) {
  Result<net::Url> parsed = net::ParseUrl(url);
  return parsed ? parsed->Origin() : std::string();
}

std::vector<std::string> CircuitBreakingCaller::TakeReleased(const std::string& gid) {
  const std::lock_guard lock(mu_);
  auto it = released_.find(gid);
  if (it == released_.end()) return {};
  std::vector<std::string> origins = std::move(it->second);
  released_.erase(it);
  return origins;
}

CircuitBreakingCaller::CircuitBreakingCaller(BranchCaller& inner, const Clock& clock,
                                             CircuitSettings settings, RetryPolicy::Jitter jitter)
    : inner_(inner), clock_(clock), settings_(settings), jitter_(std::move(jitter)) {}

CircuitBreakingCaller::Host& CircuitBreakingCaller::HostOf(const std::string& origin) {
  auto it = hosts_.find(origin);
  if (it == hosts_.end()) {
    it = hosts_.emplace(origin, Host{HostCircuit(settings_, jitter_), {}, {}}).first;
  }
  return it->second;
}

void CircuitBreakingCaller::MaybeSummarize(const std::string& origin, Host& host, TimePoint now) {
  if (now - host.last_summary < kSummaryEvery) return;
  host.last_summary = now;
  const HostCircuit& c = host.circuit;
  if (c.state() == CircuitState::kProbing) {
    spdlog::info("circuit for {} open for {}: {} transactions waiting, a probe is out", origin,
                 Approx(now - c.opened_at()), host.waiting.size());
  } else {
    spdlog::info("circuit for {} open for {}: {} transactions waiting, next probe in {}", origin,
                 Approx(now - c.opened_at()), host.waiting.size(), Approx(c.next_probe_at() - now));
  }
}

asio::awaitable<std::vector<BranchOutcome>> CircuitBreakingCaller::CallAll(
    std::vector<BranchCall> calls) {
  if (settings_.failures <= 0) {
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
      const Admission admission = host.circuit.Admit(now);
      if (admission.kind == Admission::Kind::kWait) {
        BranchOutcome& refused = outcomes[i];
        refused.not_called_until = admission.until;
        refused.circuit_open = true;
        refused.detail = "not called: the circuit for " + origins[i] + " is open";
        host.waiting.insert(calls[i].gid);
        MaybeSummarize(origins[i], host, now);
        continue;
      }
      probes[i] = admission.kind == Admission::Kind::kProbe;
      if (probes[i]) spdlog::debug("circuit for {}: gid={} is the probe", origins[i], calls[i].gid);
      host.waiting.erase(calls[i].gid);
      admitted.push_back(i);
    }
  }
  if (admitted.empty()) co_return outcomes;

  std::vector<BranchCall> made;
  std::vector<std::string> calls_gid;
  made.reserve(admitted.size());
  calls_gid.reserve(admitted.size());
  for (std::size_t i : admitted) {
    calls_gid.push_back(calls[i].gid);
    made.push_back(std::move(calls[i]));
  }
  std::vector<BranchOutcome> results = co_await inner_.CallAll(std::move(made));

  std::vector<std::string> woken;  // gids released by a circuit that closed
  {
    const TimePoint now = clock_.Now();
    const std::lock_guard lock(mu_);
    for (std::size_t k = 0; k < admitted.size(); ++k) {
      const std::size_t i = admitted[k];
      BranchOutcome& outcome = outcomes[i];
      outcome = std::move(results[k]);
      if (origins[i].empty()) continue;
      Host& host = HostOf(origins[i]);
      HostCircuit& c = host.circuit;
      const bool failed = HostFailed(outcome);
      const bool was_closed = c.state() == CircuitState::kClosed;
      switch (c.OnResult(failed, probes[i], now)) {
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
          spdlog::info(
              "circuit for {} closed after {}: the host answered; {} waiting "
              "transactions resume",
              origins[i], Approx(now - c.opened_at()), host.waiting.size());
          for (const std::string& gid : host.waiting) {
            released_[gid].push_back(origins[i]);
            woken.push_back(gid);
          }
          host.waiting.clear();
          break;
      }
      outcome.circuit_open = failed && !was_closed;
      // A call that failed and left the circuit open (the one that opened it, a failed probe, a
      // late one) waits on the circuit too, whatever its own backoff: it resumes when it closes.
      if (failed && c.state() != CircuitState::kClosed) host.waiting.insert(calls_gid[k]);
    }
  }
  if (!woken.empty() && on_close_) on_close_(woken);
  co_return outcomes;
}

std::vector<HostCircuitView> CircuitBreakingCaller::Circuits() const {
  std::vector<HostCircuitView> views;
  {
    const std::lock_guard lock(mu_);
    views.reserve(hosts_.size());
    for (const auto& [origin, host] : hosts_) {
      views.push_back({origin, host.circuit.state(), host.circuit.opens(), host.waiting.size()});
    }
  }
  std::sort(views.begin(), views.end(),
            [](const HostCircuitView& a, const HostCircuitView& b) { return a.host < b.host; });
  return views;
}

}  // namespace settle::coordinator
