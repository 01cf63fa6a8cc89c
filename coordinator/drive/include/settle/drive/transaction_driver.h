#pragma once

#include "settle/calls/branch_caller.h"
#include "settle/calls/host_gates.h"
#include "settle/core/clock.h"
#include "settle/core/span.h"
#include "settle/drive/async_store.h"
#include "settle/drive/coordinator_metrics.h"
#include "settle/drive/pass_runner.h"
#include "settle/drive/pause_signals.h"
#include "settle/drive/stuck_alerts.h"
#include "settle/engine/decision.h"
#include "settle/engine/retry_policy.h"
#include "settle/storage/store.h"

namespace settle::drive {

// Drives one transaction from its stored rows, in rounds:
//   decide (engine) -> store the status change and schedule fields, together with the
//   outcomes of earlier rounds -> call the due branches in parallel -> record outcomes.
// A status change is durable before any call it permits (no cancel goes out for an abort
// that a crash could undo), and a saga action's success before any action it lets start
// (an abort compensates the actions that storage shows may have started). Other outcomes are
// stored with the next status change, or when no call follows at once, or after
// kMaxUnstoredRounds rounds: a message's deliveries, a saga's compensations and a concurrent
// saga's actions go out back to back and their outcomes share one commit with the end. A
// call whose outcome a crash lost is simply made again (branch handlers are idempotent).
// Every write is conditioned on the status the pass read, so an operator's forceStop, or a
// client's submit or abort, is never overwritten: the pass stops and the next pass reloads.
// A write that moves a prepared transaction on (its timeout) is conditioned on its branch
// count too, so a branch registered since the read is never left out: a registerBranch is
// either refused or driven.
//
// A paused transaction (GlobalRecord::paused) gets no pass: no call, no status change (its
// timeout_to_fail does not fire), nothing due until it is resumed. A pass that loaded it before
// the pause stops before its next round of calls once the pause is signalled (PauseSignals),
// storing what it learnt: a call in flight finishes and is recorded.
//
// `gates`: the participant hosts' gates the calls go through (null: none); a pass of a
// transaction a gate woke makes its rows bound for that host due now (HostGates::TakeReleased).
//
// Lifetime: the store, caller, clock, metrics, alerts and gates must outlive it, and it every pass
// still running. Thread-safe: passes for different gids may run at once, on any I/O threads.
class TransactionDriver final : public PassRunner {
 public:
  TransactionDriver(AsyncStore& store, calls::BranchCaller& caller, const Clock& clock,
                    engine::RetryPolicy policy, CoordinatorMetrics& metrics,
                    StuckAlerts* alerts = nullptr, calls::HostGates* gates = nullptr);

  asio::awaitable<PassResult> RunPass(std::string gid, std::optional<storage::Transaction> stored,
                                      std::stop_token stop) override;

  // Where stuck transactions are reported from now on (null: nowhere). Before any pass.
  void SetAlerts(StuckAlerts* alerts) { alerts_ = alerts; }
  // Where this instance's pauses are signalled (null: nowhere, a pause is seen at the next
  // load). Before any pass.
  void SetPauseSignals(PauseSignals* pauses) { pauses_ = pauses; }
  // Where the spans of sampled transactions go (transaction_spans.h; null: nowhere): one per
  // branch call made, and the transaction's own once a pass stores its final state. Before
  // any pass.
  void SetSpans(SpanSink* spans) { spans_ = spans; }

  // Upper bound of rounds with calls in one pass, so a long saga yields to other transactions.
  static constexpr int kMaxRoundsPerPass = 64;
  // Rounds whose outcomes may wait for one commit: bounds the calls a crash makes again.
  static constexpr int kMaxUnstoredRounds = 8;
  // How long to wait before retrying a pass that storage refused.
  static constexpr Duration kStorageRetryDelay{1000};

 private:
  // Applies the engine's status changes for this round to `tx` (logging each), then its
  // next_cron_time and stuck flag; returns the decision whose calls are due now, its
  // needs_operator set when one of the changes made needs an operator.
  engine::Decision AdvanceStatus(storage::Transaction& tx, TimePoint now);
  // Whether a host's gate holds `gid` because the host's circuit is open (or its probe is
  // out): the transaction waits on a broken host, and counts as stuck.
  bool WaitsOnBrokenHost(const std::string& gid) const;
  // The one commit of a pass: `batch` (outcomes not yet stored) with the global's change from
  // `before`, or with a check that its status is still `before`'s. Nullopt once stored;
  // otherwise what the pass returns (storage unavailable: retry later; a concurrent change:
  // start over from storage). `needs_operator`: the change stored is one its engine said needs
  // an operator (alerted once stored).
  asio::awaitable<std::optional<PassResult>> StoreRound(storage::Transaction& tx,
                                                        const storage::GlobalRecord& before,
                                                        storage::WriteBatch& batch, TimePoint now,
                                                        bool needs_operator = false);
  // The calls of a round that their host's gate held (not made).
  struct Held {
    std::vector<std::pair<std::size_t, TimePoint>> rows;  // row, when it looks again itself
    bool answered = false;                                // some other call of the round was made
    // A row whose failure reached the pause-after limit (RetryPolicy::ParksAfter).
    std::optional<std::size_t> parked;
    bool host_broken = false;  // a held call's host has its circuit open
  };
  // Makes the calls of `rows` and records their outcomes in `tx` and, to be stored, `batch`;
  // the calls a gate held are not recorded: they are returned.
  asio::awaitable<Held> CallAndRecord(storage::Transaction& tx,
                                      const std::vector<std::size_t>& rows,
                                      storage::WriteBatch& batch);
  // Ends a pass whose round had held calls: stores what was learnt and says when the
  // transaction is next due, leaving the held rows' stored due times as they are.
  asio::awaitable<PassResult> EndHeldPass(storage::Transaction& tx, const Held& held,
                                          storage::WriteBatch& batch);
  // Parks the transaction for an operator (the pause-after policy): its pause is stored with
  // what was learnt, the alert raised, and the pass ends with nothing due.
  asio::awaitable<PassResult> Park(storage::Transaction& tx, std::size_t row,
                                   storage::WriteBatch& batch);
  // Makes the rows of `tx` bound for `hosts` (whose gate woke it) due at `now`, adding them
  // to `batch` to be stored.
  void ReleaseRows(storage::Transaction& tx, const std::vector<std::string>& hosts,
                   storage::WriteBatch& batch, TimePoint now);
  // Counts what a committed change did (a transaction finished, or became stuck) and raises
  // the stuck alert, for a change that needs an operator too.
  void AfterStored(const storage::GlobalRecord& before, const storage::Transaction& tx,
                   bool needs_operator);

  AsyncStore& store_;
  calls::BranchCaller& caller_;
  const Clock& clock_;
  engine::RetryPolicy policy_;
  CoordinatorMetrics& metrics_;
  StuckAlerts* alerts_;  // null: no alerts
  PauseSignals* pauses_ = nullptr;
  SpanSink* spans_ = nullptr;  // null: no spans
  calls::HostGates* const gates_;
};

}  // namespace settle::drive
