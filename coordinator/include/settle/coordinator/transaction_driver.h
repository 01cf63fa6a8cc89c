#pragma once

#include "settle/common/clock.h"
#include "settle/coordinator/async_store.h"
#include "settle/coordinator/branch_caller.h"
#include "settle/coordinator/coordinator_metrics.h"
#include "settle/coordinator/pass_runner.h"
#include "settle/coordinator/retry_policy.h"
#include "settle/coordinator/stuck_alerts.h"
#include "settle/storage/store.h"

namespace settle::coordinator {

// Drives one transaction from its stored rows, in rounds:
//   decide (engine) -> store the status change and schedule fields, together with the
//   outcomes of earlier rounds -> call the due branches in parallel -> record outcomes.
// A status change is durable before any call it permits (no cancel goes out for an abort
// that a crash could undo). Outcomes are stored with the next status change, or when no call
// follows at once, or after kMaxUnstoredRounds rounds: a saga's steps go out back to back and
// its outcomes share one commit with its end. A call whose outcome a crash lost is simply
// made again (branch handlers are idempotent).
// Every write is conditioned on the status the pass read, so an operator's forceStop, or a
// client's submit or abort, is never overwritten: the pass stops and the next pass reloads.
//
// Thread-safe: passes for different gids may run at once, on any I/O threads.
class TransactionDriver final : public PassRunner {
 public:
  TransactionDriver(AsyncStore& store, BranchCaller& caller, const Clock& clock,
                    RetryPolicy policy, CoordinatorMetrics& metrics,
                    StuckAlerts* alerts = nullptr);

  asio::awaitable<PassResult> RunPass(std::string gid, std::optional<storage::Transaction> stored,
                                      std::stop_token stop) override;

  // Where stuck transactions are reported from now on (null: nowhere). Before any pass.
  void SetAlerts(StuckAlerts* alerts) { alerts_ = alerts; }

  // Upper bound of rounds in one pass, so a long saga yields to other transactions.
  static constexpr int kMaxRoundsPerPass = 64;
  // Rounds whose outcomes may wait for one commit: bounds the calls a crash makes again.
  static constexpr int kMaxUnstoredRounds = 8;
  // How long to wait before retrying a pass that storage refused.
  static constexpr Duration kStorageRetryDelay{1000};

 private:
  // Counts what a committed change did (a transaction finished, or became stuck) and raises
  // the stuck alert.
  void AfterStored(const storage::GlobalRecord& before, const storage::Transaction& tx);

  AsyncStore& store_;
  BranchCaller& caller_;
  const Clock& clock_;
  RetryPolicy policy_;
  CoordinatorMetrics& metrics_;
  StuckAlerts* alerts_;  // null: no alerts
};

}  // namespace settle::coordinator
