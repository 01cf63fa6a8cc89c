#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "settle/calls/branch_caller.h"
#include "settle/calls/host_gates.h"
#include "settle/core/clock.h"
#include "settle/engine/host_gate.h"

namespace settle::calls {

// Puts a HostGate (a circuit, a cap on calls in flight, paced releases) in front of `inner`
// for every participant origin (scheme, host, port; docs/operations.md, "Participant
// outages"). A call the gate holds is not made: its outcome has not_called_until, which the
// driver does not store (the branch keeps its stored due time; docs/architecture.md), and the
// transaction waits in the gate, costing nothing, until the gate wakes it: handed to the
// constructor's on-wake function to be driven at once, its pass takes the hosts that woke it
// (TakeReleased) and makes its rows bound for them due now whatever their stored due time. Every
// result of a call that was made feeds the gate (HostFailed). Gates live in memory only: after a
// restart they are rebuilt from failures, and every transaction is due at its stored time.
//
// Tick() wakes what time releases: a due probe, the paced release after a circuit closes; the
// end of a call wakes what its slot frees.
//
// Logs for the host instead of per call: one line when a circuit opens, one per probe that
// fails or closes it, one when the release after it is done, and while it stays open (or
// releases) a summary at most every kSummaryEvery. Failed calls of an open circuit are marked
// circuit_open, so that the driver does not log each one.
//
// With no circuits (failures 0) and no cap (max_in_flight 0) every call goes straight to
// `inner`. Calls with a URL that does not parse have no host and no gate.
//
// The gates are bounded (docs/operations.md, "Hostile clients"): at most settings.max_hosts,
// the last of them the overflow gate, kOverflowHost, which every host beyond the others shares
// (one circuit, one cap, one metric label); a gate that holds nothing, has no call out and
// made no call nor woke one for settings.idle_after is forgotten (its counters with it), by a sweep
// every kPruneEvery. Tick() visits only the gates that hold transactions or release them.
//
// Lifetime: `inner` and `clock` (and what the on-wake function reaches) must outlive it, and it
// every CallAll still running. Thread-safe: CallAll from many coroutines at once, Tick from a
// timer; the gates share one mutex, never held across a call or the on-wake function.
class HostGatedCaller final : public BranchCaller, public HostGates {
 public:
  using OnWake = std::function<void(const std::vector<std::string>& gids)>;

  static constexpr Duration kSummaryEvery{10'000};
  static constexpr Duration kTickEvery{50};  // how often settled calls Tick()
  static constexpr std::size_t kOldestShown = 20;
  static constexpr const char* kOverflowHost = "other";
  static constexpr Duration kPruneEvery{10'000};

  // `on_wake` is called, outside the lock, with transactions a gate woke: to be driven now. It
  // may reach what is built after this caller (the scheduler): no gate wakes anything before
  // a call was made.
  HostGatedCaller(BranchCaller& inner, const Clock& clock, engine::HostGateSettings settings,
                  OnWake on_wake,
                  engine::RetryPolicy::Jitter jitter = engine::RetryPolicy::RandomJitter());

  asio::awaitable<std::vector<engine::BranchOutcome>> CallAll(
      std::vector<engine::BranchCall> calls) override;

  // Wakes the transactions that time releases (see above) and logs the summaries.
  void Tick();

  std::vector<std::string> TakeReleased(const std::string& gid) override;
  bool Holds(const std::string& gid) const override;
  std::vector<HostView> Hosts() const override;
  std::optional<HeldView> HeldBy(const std::string& gid) const override;
  void RetryNow(const std::string& gid) override;
  Result<std::string> RetryHost(const std::string& host) override;
  void Forget(const std::string& gid) override;

  const engine::HostGateSettings& settings() const { return settings_; }
  // Gates forgotten because they were idle, since the start.
  std::uint64_t pruned() const;

 private:
  struct Host {
    engine::HostGate gate;
    TimePoint last_summary;
    TimePoint last_used;  // its last call admitted or ended, or transaction woken
  };
  // What its gate said of one of a CallAll's calls.
  struct Admitted {
    std::string origin;     // the call's host; empty: no gate
    bool overflow = false;  // its gate is kOverflowHost's, not its own host's
    bool made = false;      // not held: the call is made
    bool probe = false;     // the call is its open circuit's probe
    bool forced = false;    // an operator's Retry now sent it
    // What its gate tracks it by, kept because the calls made are moved out: set for a call
    // made through a gate.
    std::string gid;
    TimePoint created;
  };
  // What the gates said of a CallAll's calls: the held ones' outcomes, and which are made.
  struct Admission {
    std::vector<engine::BranchOutcome> outcomes;  // a held call's: not_called_until and why
    std::vector<Admitted> calls;                  // one per call, in the calls' order
    std::size_t made = 0;                         // how many are made
  };

  // Asks each call's gate whether it may be made now.
  Admission Admit(const std::vector<engine::BranchCall>& calls);
  // Feeds the results of the calls made to their gates (the outcomes are moved into
  // `admission`); answers the transactions the ended calls wake.
  std::vector<std::string> Record(Admission& admission, std::vector<engine::BranchOutcome> results);

  // Whether `origin` has no gate of its own and none can be made now (there is no room): its
  // calls go through kOverflowHost's. Under mu_.
  bool Overflows(const std::string& origin) const;
  // The key of a call's gate: its origin, or kOverflowHost.
  static const std::string& GateKey(const Admitted& call);
  // The gate of key `gate`, made on first use. Under mu_.
  Host& HostOf(const std::string& gate);
  // Notes whether `gate` holds or releases transactions (what Tick visits). Under mu_.
  void NoteActive(const std::string& gate, const Host& host);
  // Remembers that `gid`, held by the overflow gate, has calls bound for `origin` (what its
  // pass makes due when woken). Under mu_.
  void NoteOverflowOrigin(const std::string& gid, const std::string& origin);
  // Whether a Retry now of `gid` is pending (RetryNow), at `now`. Under mu_.
  bool RetryNowPending(const std::string& gid, TimePoint now) const;
  // Forgets the gates idle for settings_.idle_after. Under mu_.
  void Prune(TimePoint now);
  // Logs the summary of an open or releasing host if the last one is kSummaryEvery old, and
  // the end of a release. Under mu_.
  void Summarize(const std::string& origin, Host& host, TimePoint now, bool was_releasing);
  // Takes what `host`'s gate wakes now into `woken`, noting the host for each. Under mu_.
  void TakeWoken(const std::string& origin, Host& host, TimePoint now,
                 std::vector<std::string>& woken);
  void Wake(const std::vector<std::string>& gids) const;

  BranchCaller& inner_;
  const Clock& clock_;
  const engine::HostGateSettings settings_;
  const OnWake on_wake_;
  const engine::RetryPolicy::Jitter jitter_;

  mutable std::mutex mu_;
  std::unordered_map<std::string, Host> hosts_;  // by origin, and kOverflowHost
  std::unordered_set<std::string> active_;       // gates that hold or release transactions
  // gid held by the overflow gate -> the hosts its calls were bound for.
  std::unordered_map<std::string, std::vector<std::string>> overflow_origins_;
  TimePoint last_prune_;
  std::uint64_t pruned_ = 0;
  // gid -> origins whose gate woke it, until its pass takes them.
  std::unordered_map<std::string, std::vector<std::string>> released_;
  // released_.size(), read without the lock: every pass asks, and almost always for nothing.
  std::atomic<std::size_t> released_size_{0};
  // gid -> until when its Retry now waits for its pass to call (RetryNow, RetryHost).
  std::unordered_map<std::string, TimePoint> retry_now_;
  // Whether some gate holds transactions (active_ is not empty), read without the lock: every
  // finished transaction is forgotten (Forget), and almost always nothing holds it.
  std::atomic<bool> holding_{false};
};

}  // namespace settle::calls
