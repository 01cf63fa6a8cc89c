#include "settle/coordinator/transaction_driver.h"

#include <spdlog/spdlog.h>

#include "settle/coordinator/decision.h"
#include "settle/coordinator/outcome_recorder.h"

namespace settle::coordinator {
namespace {

BranchCall CallFor(const storage::Transaction& tx, const storage::BranchRecord& row) {
  BranchCall call;
  call.gid = row.gid;
  call.trans_type = tx.global.trans_type;
  call.branch_id = row.branch_id;
  call.op = row.op;
  call.url = row.url;
  call.data = row.data;
  call.headers = tx.global.options.branch_headers;
  call.timeout = tx.global.options.request_timeout;
  return call;
}

// When the transaction must next be looked at, as stored for a restart: with calls about to
// go out it is due now (a crash must not delay them), otherwise at the engine's wake time.
std::optional<TimePoint> NextCronTime(const storage::GlobalRecord& g, const Decision& d,
                                      TimePoint now) {
  if (IsTerminal(g.status)) return std::nullopt;
  if (d.calls.empty()) return d.wake_at;
  if (g.next_cron_time && *g.next_cron_time <= now) return g.next_cron_time;
  return now;
}

// A branch that answered is logged at debug: the transaction's own lines (submitted, its
// status changes) tell its story at info, one or two lines a transaction rather than one a call.
// A call that must be retried is a warning.
void LogOutcome(const storage::BranchRecord& row, const BranchOutcome& outcome) {
  if (row.status != BranchStatus::kPrepared) {
    spdlog::debug("gid={} branch={} op={} outcome={} status={} attempts={}", row.gid, row.branch_id,
                 ToString(row.op), ToString(outcome.result), ToString(row.status), row.attempts);
  } else {
    spdlog::warn("gid={} branch={} op={} outcome={} attempts={} failures={} retry_at={} error={}",
                 row.gid, row.branch_id, ToString(row.op), ToString(outcome.result), row.attempts,
                 row.failures, FormatTime(row.next_retry_at), row.last_error);
  }
}

}  // namespace

TransactionDriver::TransactionDriver(AsyncStore& store, BranchCaller& caller,
                                     const Clock& clock, RetryPolicy policy,
                                     CoordinatorMetrics& metrics, StuckAlerts* alerts)
    : store_(store),
      caller_(caller),
      clock_(clock),
      policy_(std::move(policy)),
      metrics_(metrics),
      alerts_(alerts) {}

void TransactionDriver::AfterStored(const storage::GlobalRecord& before,
                                    const storage::Transaction& tx) {
  const storage::GlobalRecord& after = tx.global;
  if (IsTerminal(after.status) && !IsTerminal(before.status)) {
    metrics_.TransactionFinished(after.trans_type, after.status);
  }
  if (after.stuck && !before.stuck) {
    metrics_.TransactionStuck(after.trans_type);
    if (alerts_ != nullptr) alerts_->TransactionStuck(tx);
  }
}

asio::awaitable<PassResult> TransactionDriver::RunPass(std::string gid,
                                                      std::optional<storage::Transaction> stored,
                                                      std::stop_token stop) {
  if (!stored) {
    auto loaded = co_await store_.Load(gid);
    if (!loaded) {
      spdlog::error("gid={} cannot be loaded, retrying later: {}", gid,
                    loaded.status().ToString());
      co_return PassResult{clock_.Now() + kStorageRetryDelay, std::nullopt};
    }
    if (!loaded->has_value()) co_return PassResult{};
    stored = std::move(**loaded);
  }
  storage::Transaction tx = std::move(*stored);
  storage::WriteBatch batch;  // outcomes learnt and not yet stored
  int unstored_rounds = 0;    // rounds whose outcomes are in `batch`

  for (int round = 0; round < kMaxRoundsPerPass; ++round) {
    TimePoint now = clock_.Now();
    const storage::GlobalRecord before = tx.global;
    Decision d = Decide(tx, now);
    while (d.next_status) {
      spdlog::info("gid={} {} -> {}{}{}", gid, ToString(tx.global.status), ToString(*d.next_status),
                   d.reason.empty() ? "" : " reason=", d.reason);
      ApplyStatusChange(tx.global, *d.next_status, d.reason, now);
      d = Decide(tx, now);
    }
    tx.global.next_cron_time = NextCronTime(tx.global, d, now);
    if (!IsTerminal(tx.global.status)) {
      tx.global.stuck = HasStuckBranch(tx, policy_);
      if (tx.global.stuck && !before.stuck) {
        spdlog::error("gid={} is stuck: a branch failed {} times in a row", gid,
                      policy_.settings().stuck_after);
      }
    }
    const bool stopping = stop.stop_requested();
    const bool global_changed = !(tx.global == before);
    // Outcomes may wait for a later commit while the next calls go out at once and nothing
    // else changes (a crash only makes those calls again); a status change is stored before
    // any call it permits.
    const bool calls_follow = !d.calls.empty() && !stopping;
    if (global_changed || (!batch.empty() && (!calls_follow ||
                                              unstored_rounds >= kMaxUnstoredRounds))) {
      if (global_changed) {
        tx.global.update_time = now;
        batch.Add(storage::UpdateGlobal{tx.global, before.status});
      } else {
        batch.Add(storage::ExpectGlobalStatus{gid, {before.status}});
      }
      const Status committed = co_await store_.Commit(std::move(batch));
      batch.Clear();
      unstored_rounds = 0;
      if (!committed.ok()) {
        if (committed.code() == StatusCode::kUnavailable) {
          spdlog::error("gid={} outcome not stored, retrying later: {}", gid, committed.ToString());
          co_return PassResult{now + kStorageRetryDelay, std::nullopt};
        }
        // Someone else changed the transaction (forceStop, abort): start over from storage.
        spdlog::info("gid={} changed during the pass: {}", gid, committed.ToString());
        co_return PassResult{now, std::nullopt};
      }
      AfterStored(before, tx);
    } else if (!batch.empty()) {
      ++unstored_rounds;
    }
    // Here `tx` is exactly what is stored, unless calls follow.
    if (IsTerminal(tx.global.status)) co_return PassResult{std::nullopt, std::move(tx)};
    if (d.calls.empty()) co_return PassResult{d.wake_at, std::move(tx)};
    if (stopping) co_return PassResult{now, std::move(tx)};

    std::vector<BranchCall> calls;
    calls.reserve(d.calls.size());
    for (std::size_t row : d.calls) calls.push_back(CallFor(tx, tx.branches[row]));
    const std::vector<BranchOutcome> outcomes = co_await caller_.CallAll(std::move(calls));
    now = clock_.Now();
    for (std::size_t i = 0; i < d.calls.size(); ++i) {
      storage::BranchRecord& row = tx.branches[d.calls[i]];
      metrics_.BranchCalled(row.op, outcomes[i], row.attempts > 0);
      RecordOutcome(row, outcomes[i], tx.global.options.retry_interval, policy_, now);
      LogOutcome(row, outcomes[i]);
      batch.Add(storage::UpdateBranch{row, BranchStatus::kPrepared});
    }
  }
  // Out of rounds with work left: store what was learnt and come back soon.
  if (!batch.empty()) {
    batch.Add(storage::ExpectGlobalStatus{gid, {tx.global.status}});
    const Status committed = co_await store_.Commit(std::move(batch));
    if (!committed.ok()) {
      spdlog::warn("gid={} outcomes not stored: {}", gid, committed.ToString());
      co_return PassResult{clock_.Now(), std::nullopt};
    }
  }
  co_return PassResult{clock_.Now(), std::move(tx)};
}

}  // namespace settle::coordinator
