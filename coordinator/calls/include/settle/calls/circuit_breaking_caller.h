#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "settle/calls/branch_caller.h"
#include "settle/core/clock.h"
#include "settle/engine/host_circuit.h"

namespace settle::coordinator {

// One participant host's circuit as the metrics see it.
struct HostCircuitView {
  std::string host;  // the origin: "http://127.0.0.1:9"
  CircuitState state = CircuitState::kClosed;
  std::uint64_t opens = 0;  // times it opened
  std::size_t waiting = 0;  // transactions waiting for it to close
};

// Puts a HostCircuit in front of `inner` for every participant origin (scheme, host, port;
// docs/operations.md, "Participant outages"). A call whose host's circuit is open is not made:
// its outcome has not_called_until (the next probe's time), which the driver records as no
// attempt and no failure, only as the branch's next due time. Every result of a call that was
// made feeds the circuit (HostFailed). Circuits live in memory only: after a restart they are
// rebuilt from failures, and waiting transactions keep their stored due times.
//
// Logs for the host instead of per call: one line when a circuit opens, one per probe that
// fails or closes it, and while it stays open a summary at most every kSummaryEvery, when a
// refused call comes by. Failed calls of an open circuit are marked circuit_open, so that the
// driver does not log each one. When a circuit closes, the transactions waiting on it (those
// it refused, and those whose failed call opened it or was a failed probe) are released: each
// is handed to the on-close function, to be driven at once, and its pass takes the released
// hosts (TakeReleased) to make their rows due now whatever their stored due time.
//
// With settings.failures 0 every call goes straight to `inner`. Calls with a URL that does not
// parse have no host and no circuit.
//
// Thread-safe: CallAll from many coroutines at once; the circuits share one mutex, never held
// across a call.
class CircuitBreakingCaller final : public BranchCaller {
 public:
  using OnClose = std::function<void(const std::vector<std::string>& gids)>;

  static constexpr Duration kSummaryEvery{10'000};

  CircuitBreakingCaller(BranchCaller& inner, const Clock& clock, CircuitSettings settings,
                        RetryPolicy::Jitter jitter = RetryPolicy::RandomJitter());

  // Called, outside the lock and on the thread of the call that closed a circuit, with the
  // gids the circuit refused while open. Set before any call.
  void SetOnClose(OnClose on_close) { on_close_ = std::move(on_close); }

  asio::awaitable<std::vector<BranchOutcome>> CallAll(std::vector<BranchCall> calls) override;

  // The hosts whose circuit closed while `gid` waited on them, forgotten as they are returned:
  // the transaction's rows bound for them are due now.
  std::vector<std::string> TakeReleased(const std::string& gid);

  // "http://host:port" of a branch URL; empty if it does not parse (no circuit).
  static std::string OriginOf(const std::string& url);

  // Every host called so far, sorted by host.
  std::vector<HostCircuitView> Circuits() const;

  const CircuitSettings& settings() const { return settings_; }

 private:
  struct Host {
    HostCircuit circuit;
    std::unordered_set<std::string> waiting;  // gids to wake when it closes
    TimePoint last_summary;
  };

  // The circuit of `origin`, made closed on first use. Under mu_.
  Host& HostOf(const std::string& origin);
  // Logs the summary of an open circuit if the last one is kSummaryEvery old. Under mu_.
  void MaybeSummarize(const std::string& origin, Host& host, TimePoint now);

  BranchCaller& inner_;
  const Clock& clock_;
  const CircuitSettings settings_;
  const RetryPolicy::Jitter jitter_;
  OnClose on_close_;

  mutable std::mutex mu_;
  std::unordered_map<std::string, Host> hosts_;  // by origin
  // gid -> origins whose circuit closed while it waited, until its pass takes them.
  std::unordered_map<std::string, std::vector<std::string>> released_;
};

}  // namespace settle::coordinator
