#include "settle/drive/transaction_driver.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <variant>

#include "settle/core/ascii.h"
#include "settle/core/log_text.h"
#include "settle/core/trace_context.h"
#include "settle/drive/transaction_finished.h"
#include "settle/drive/transaction_spans.h"
#include "settle/engine/decision.h"
#include "settle/engine/outcome_recorder.h"
#include "settle/engine/type_rules.h"

namespace settle::drive {
namespace {

engine::BranchCall CallFor(const storage::Transaction& tx, const storage::BranchRecord& row) {
  engine::BranchCall call;
  call.gid = row.gid;
  call.trans_type = tx.global.trans_type;
  call.branch_id = row.branch_id;
  call.op = row.op;
  call.url = row.url;
  call.data = row.data;
  call.headers = tx.global.options.branch_headers;
  call.timeout = tx.global.options.request_timeout;
  call.created = tx.global.create_time;
  const auto call_op = engine::RulesOf(tx.global.trans_type).call_op;
  if (call_op != nullptr) call.op_name = call_op(tx, row);
  // Each attempt is a span of its own, a child of the transaction's: settled's traceparent
  // replaces one a client put in branch_headers (docs/protocol.md §4.1).
  call.trace = ChildSpan(tx.global.trace);
  if (!call.trace.empty()) {
    std::erase_if(call.headers, [](const auto& header) {
      return EqualsIgnoreAsciiCase(header.first, kTraceparentHeader) ||
             EqualsIgnoreAsciiCase(header.first, kTracestateHeader);
    });
    call.headers.emplace(kTraceparentHeader, call.trace.Traceparent());
    if (!call.trace.state.empty()) call.headers.emplace(kTracestateHeader, call.trace.state);
  }
  return call;
}

// Whether a row the calls of `d` may go out only once stored (Decision::stored_before_calls)
// has an outcome in `batch` not stored yet.
bool CallsWaitForBatch(const storage::Transaction& tx, const engine::Decision& d,
                       const storage::WriteBatch& batch) {
  if (d.stored_before_calls.empty()) return false;
  return std::any_of(batch.ops().begin(), batch.ops().end(), [&](const storage::WriteOp& op) {
    const auto* update = std::get_if<storage::UpdateBranch>(&op);
    if (update == nullptr) return false;
    return std::any_of(
        d.stored_before_calls.begin(), d.stored_before_calls.end(), [&](std::size_t row) {
          const storage::BranchRecord& r = tx.branches[row];
          return r.branch_id == update->record.branch_id && r.op == update->record.op;
        });
  });
}

// When the transaction must next be looked at, as stored for a restart: with calls about to
// go out it is due now (a crash must not delay them), otherwise at the engine's wake time.
std::optional<TimePoint> NextCronTime(const storage::GlobalRecord& g, const engine::Decision& d,
                                      TimePoint now) {
  if (IsTerminal(g.status)) return std::nullopt;
  if (d.calls.empty()) return d.wake_at;
  if (g.next_cron_time && *g.next_cron_time <= now) return g.next_cron_time;
  return now;
}

// A branch that answered is logged at debug: the transaction's own lines (submitted, its
// status changes) tell its story at info, one or two lines a transaction rather than one a call.
// A call that must be retried is a warning, unless its host's circuit is open: the circuit
// logs for the host then, not one line per call.
void LogOutcome(const storage::BranchRecord& row, const TraceContext& trace,
                const engine::BranchOutcome& outcome) {
  if (outcome.not_called_until) {
    spdlog::debug("gid={} branch={} op={} not called: {} retry_at={} trace_id={}", row.gid,
                  row.branch_id, ToString(row.op), LogValue(outcome.detail),
                  FormatTime(row.next_retry_at), trace.trace_id);
  } else if (row.status != BranchStatus::kPrepared || outcome.circuit_open) {
    spdlog::debug("gid={} branch={} op={} outcome={} status={} attempts={} trace_id={} span_id={}",
                  row.gid, row.branch_id, ToString(row.op), ToString(outcome.result),
                  ToString(row.status), row.attempts, trace.trace_id, trace.span_id);
  } else {
    spdlog::warn(
        "gid={} branch={} op={} outcome={} attempts={} failures={} retry_at={} trace_id={} "
        "span_id={} error={}",
        row.gid, row.branch_id, ToString(row.op), ToString(outcome.result), row.attempts,
        row.failures, FormatTime(row.next_retry_at), trace.trace_id, trace.span_id,
        LogValue(row.last_error));
  }
}

}  // namespace

TransactionDriver::TransactionDriver(AsyncStore& store, calls::BranchCaller& caller,
                                     const Clock& clock, engine::RetryPolicy policy,
                                     CoordinatorMetrics& metrics, StuckAlerts* alerts,
                                     calls::HostGates* gates)
    : store_(store),
      caller_(caller),
      clock_(clock),
      policy_(std::move(policy)),
      metrics_(metrics),
      alerts_(alerts),
      gates_(gates) {}

void TransactionDriver::AfterStored(const storage::GlobalRecord& before,
                                    const storage::Transaction& tx, bool needs_operator) {
  const storage::GlobalRecord& after = tx.global;
  if (IsTerminal(after.status) && !IsTerminal(before.status)) {
    TransactionFinished(tx, clock_.Now(), metrics_, spans_);
  }
  // Stuck only for waiting on a broken host (WaitsOnBrokenHost): the host's circuit speaks for
  // it (its log and the hosts panel), not one alert per transaction it holds.
  const bool newly_stuck = after.stuck && !before.stuck && engine::HasStuckBranch(tx, policy_);
  // A status change its engine said needs an operator (a message that gave up delivering) is
  // alerted as a stuck one is.
  if (newly_stuck || needs_operator) {
    metrics_.TransactionStuck(after.trans_type);
    if (alerts_ != nullptr) alerts_->TransactionStuck(tx);
  }
}

bool TransactionDriver::WaitsOnBrokenHost(const std::string& gid) const {
  if (gates_ == nullptr) return false;
  const std::optional<calls::HeldView> held = gates_->HeldBy(gid);
  return held && held->state != engine::CircuitState::kClosed;
}

engine::Decision TransactionDriver::AdvanceStatus(storage::Transaction& tx, TimePoint now) {
  const bool was_stuck = tx.global.stuck;
  engine::Decision d = engine::Decide(tx, now);
  bool needs_operator = false;
  while (d.next_status) {
    // A change that needs an operator is an error; a saga rolled back or a TCC aborted is a
    // business outcome.
    needs_operator = needs_operator || d.needs_operator;
    spdlog::log(d.needs_operator ? spdlog::level::err : spdlog::level::info,
                "gid={} {} -> {} trace_id={}{}{}", tx.global.gid, ToString(tx.global.status),
                ToString(*d.next_status), tx.global.trace.trace_id,
                d.reason.empty() ? "" : " reason=", d.reason.empty() ? "" : LogValue(d.reason));
    engine::ApplyStatusChange(tx.global, *d.next_status, d.reason, now);
    d = engine::Decide(tx, now);
  }
  d.needs_operator = needs_operator;
  tx.global.next_cron_time = NextCronTime(tx.global, d, now);
  if (!IsTerminal(tx.global.status)) {
    const bool failing = engine::HasStuckBranch(tx, policy_);
    // Waiting on a host whose circuit is open is as stuck as failing there: "stuck only"
    // lists every transaction held by a broken host, not only the one carrying its probe.
    tx.global.stuck = failing || WaitsOnBrokenHost(tx.global.gid);
    if (failing && !was_stuck) {
      const auto stuck =
          std::find_if(tx.branches.begin(), tx.branches.end(), [this](const auto& b) {
            return b.status == BranchStatus::kPrepared && policy_.IsStuck(b.failures);
          });
      spdlog::error("gid={} is stuck: branch {} ({}) at {} failed {} times in a row", tx.global.gid,
                    stuck->branch_id, ToString(stuck->op), calls::OriginOf(stuck->url),
                    stuck->failures);
    }
  }
  return d;
}

void TransactionDriver::ReleaseRows(storage::Transaction& tx, const std::vector<std::string>& hosts,
                                    storage::WriteBatch& batch, TimePoint now) {
  if (hosts.empty()) return;
  for (storage::BranchRecord& row : tx.branches) {
    if (row.status != BranchStatus::kPrepared || row.next_retry_at <= now) continue;
    const std::string origin = calls::OriginOf(row.url);
    if (std::find(hosts.begin(), hosts.end(), origin) == hosts.end()) continue;
    row.next_retry_at = now;
    batch.Add(storage::UpdateBranch{row, BranchStatus::kPrepared});
  }
}

asio::awaitable<std::optional<PassResult>> TransactionDriver::StoreRound(
    storage::Transaction& tx, const storage::GlobalRecord& before, storage::WriteBatch& batch,
    TimePoint now, bool needs_operator) {
  const std::string& gid = tx.global.gid;
  if (!(tx.global == before)) {
    tx.global.update_time = now;
    batch.Add(storage::UpdateGlobal{tx.global, before.status});
  } else {
    batch.Add(storage::ExpectGlobalStatus{gid, {before.status}});
  }
  // While prepared, a client may register branches (TCC, XA): a decision that moves the
  // transaction on, taken from rows read before a registration, must not commit after it, or
  // the registered branch would never be driven. The count makes the registration and this
  // commit serialize on the transaction (write_batch.h): one that committed since the read
  // fails this commit, and the next pass reads its branch; one after it is refused.
  if (before.status == GlobalStatus::kPrepared && tx.global.status != before.status) {
    batch.Add(storage::ExpectBranchCount{gid, tx.branches.size()});
  }
  const Status committed = co_await store_.Commit(std::move(batch));
  batch.Clear();
  if (committed.ok()) {
    AfterStored(before, tx, needs_operator);
    co_return std::nullopt;
  }
  if (committed.code() == StatusCode::kUnavailable) {
    spdlog::error("gid={} outcome not stored, retrying later: {}", gid, committed.ToString());
    co_return PassResult{now + kStorageRetryDelay, std::nullopt};
  }
  // Someone else changed the transaction (forceStop, abort): start over from storage.
  spdlog::info("gid={} changed during the pass: {}", gid, committed.ToString());
  co_return PassResult{now, std::nullopt};
}

asio::awaitable<TransactionDriver::Held> TransactionDriver::CallAndRecord(
    storage::Transaction& tx, const std::vector<std::size_t>& rows, storage::WriteBatch& batch) {
  std::vector<engine::BranchCall> calls;
  calls.reserve(rows.size());
  std::vector<TraceContext> traces;  // each call's span, for its log line
  traces.reserve(rows.size());
  for (std::size_t row : rows) {
    calls.push_back(CallFor(tx, tx.branches[row]));
    traces.push_back(calls.back().trace);
  }
  const TimePoint started = clock_.Now();
  const std::vector<engine::BranchOutcome> outcomes = co_await caller_.CallAll(std::move(calls));
  const TimePoint now = clock_.Now();
  const bool traced = spans_ != nullptr && IsSampled(tx.global.trace);
  Held held;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    storage::BranchRecord& row = tx.branches[rows[i]];
    if (outcomes[i].not_called_until) {
      held.rows.emplace_back(rows[i], *outcomes[i].not_called_until);
      held.host_broken = held.host_broken || outcomes[i].circuit_open;
      LogOutcome(row, traces[i], outcomes[i]);
      continue;
    }
    held.answered = true;
    metrics_.BranchCalled(row.op, outcomes[i], row.attempts > 0);
    const int failures_before = row.failures;
    // The row as this pass read it (or as this batch leaves it): an operator's redirect or
    // Retry now committed since makes the store refuse the outcome, and the pass start over.
    const TimePoint read_next_retry_at = row.next_retry_at;
    engine::RecordOutcome(row, tx.global.trans_type, outcomes[i], tx.global.options.retry_interval,
                          policy_, now);
    LogOutcome(row, traces[i], outcomes[i]);
    if (traced) spans_->Export(AttemptSpan(tx.global, row, traces[i], outcomes[i], started, now));
    if (row.status == BranchStatus::kPrepared && row.failures > failures_before &&
        policy_.ParksAfter(row.failures, tx.global.options.pause_after)) {
      held.parked = rows[i];
    }
    batch.Add(storage::UpdateBranch{row, BranchStatus::kPrepared, read_next_retry_at});
  }
  co_return held;
}

asio::awaitable<PassResult> TransactionDriver::Park(storage::Transaction& tx, std::size_t row,
                                                    storage::WriteBatch& batch) {
  const TimePoint now = clock_.Now();
  const storage::BranchRecord& b = tx.branches[row];
  constexpr std::size_t kMaxErrorInReason = 512;
  std::string reason = "branch " + b.branch_id + " (" + std::string(ToString(b.op)) + ") at " +
                       calls::OriginOf(b.url) + " failed " + std::to_string(b.failures) +
                       (b.failures == 1 ? " time: " : " times in a row: ") +
                       b.last_error.substr(0, kMaxErrorInReason);
  storage::Pause pause{now, std::string(storage::kPausedByPolicy), std::move(reason)};
  // An operator's pause stored meanwhile is kept (keep_existing).
  batch.Add(storage::PauseGlobal{tx.global.gid, pause, true});
  std::optional<PassResult> refused = co_await StoreRound(tx, tx.global, batch, clock_.Now());
  if (refused) co_return std::move(*refused);
  spdlog::error("gid={} paused by the pause-after policy: {}; it waits for an operator",
                tx.global.gid, LogValue(pause.reason));
  tx.global.paused = std::move(pause);
  if (gates_ != nullptr) gates_->Forget(tx.global.gid);
  if (alerts_ != nullptr) alerts_->TransactionParked(tx);
  co_return PassResult{std::nullopt, std::move(tx)};
}

asio::awaitable<PassResult> TransactionDriver::EndHeldPass(storage::Transaction& tx,
                                                           const Held& held,
                                                           storage::WriteBatch& batch) {
  const TimePoint now = clock_.Now();
  // Held by a host whose circuit is open: stored as stuck at once (WaitsOnBrokenHost keeps it
  // so on its later passes, until the host takes calls again).
  const storage::GlobalRecord before = tx.global;
  if (held.host_broken && !IsTerminal(tx.global.status)) tx.global.stuck = true;
  if (!batch.empty() || !(tx.global == before)) {
    std::optional<PassResult> refused = co_await StoreRound(tx, before, batch, now);
    if (refused) co_return std::move(*refused);
  }
  // Answers came back beside the held calls: the next pass decides on them at once.
  if (held.answered) co_return PassResult{now, std::nullopt};
  // Only held calls: nothing changed. The transaction is due when its engine next has work
  // without them (a timeout, another branch's retry) or when they look again by themselves;
  // the gate wakes it before that when it may call. The held rows' times stay out of storage.
  for (const auto& [row, until] : held.rows) tx.branches[row].next_retry_at = until;
  const engine::Decision later = engine::Decide(tx, now);
  const bool more = later.next_status || !later.calls.empty();
  PassResult result{more ? std::optional<TimePoint>(now) : later.wake_at, std::nullopt};
  result.held = !more;
  co_return result;
}

asio::awaitable<PassResult> TransactionDriver::RunPass(std::string gid,
                                                       std::optional<storage::Transaction> stored,
                                                       std::stop_token stop) {
  // Hosts whose gate woke the transaction: its rows bound for them are due now. Taken first,
  // so that a transaction that is gone does not leave them behind.
  const std::vector<std::string> released =
      gates_ != nullptr ? gates_->TakeReleased(gid) : std::vector<std::string>{};
  if (!stored) {
    auto loaded = co_await store_.Load(gid);
    if (!loaded) {
      spdlog::error("gid={} cannot be loaded, retrying later: {}", gid, loaded.status().ToString());
      co_return PassResult{clock_.Now() + kStorageRetryDelay, std::nullopt};
    }
    if (!loaded->has_value()) {
      if (gates_ != nullptr) gates_->Forget(gid);
      co_return PassResult{};
    }
    stored = std::move(**loaded);
  }
  storage::Transaction tx = std::move(*stored);
  // Paused: nothing is done until it is resumed (ResumeGlobal makes it due again). A finished
  // transaction keeps a pause it had, and has nothing to do either way.
  if (tx.global.paused && !IsTerminal(tx.global.status)) {
    if (pauses_ != nullptr) pauses_->Clear(gid);
    if (gates_ != nullptr) gates_->Forget(gid);
    spdlog::debug("gid={} is paused by {}: no pass", gid, LogValue(tx.global.paused->by));
    co_return PassResult{std::nullopt, std::move(tx)};
  }
  // A pause signalled for a transaction that has finished since (a force stop) is for nobody.
  if (pauses_ != nullptr && IsTerminal(tx.global.status)) pauses_->Clear(gid);
  storage::WriteBatch batch;  // outcomes learnt and not yet stored
  int unstored_rounds = 0;    // rounds whose outcomes are in `batch`
  ReleaseRows(tx, released, batch, clock_.Now());

  for (int round = 0;; ++round) {
    const TimePoint now = clock_.Now();
    // A pause signalled since the transaction was read: what the calls answered is stored,
    // nothing is decided, and the next pass reads the pause.
    if (pauses_ != nullptr && pauses_->IsSignalled(gid)) {
      if (!batch.empty()) {
        std::optional<PassResult> refused = co_await StoreRound(tx, tx.global, batch, now);
        if (refused) co_return std::move(*refused);
      }
      co_return PassResult{now, std::nullopt};
    }
    const storage::GlobalRecord before = tx.global;
    const engine::Decision d = AdvanceStatus(tx, now);
    // No calls once a stop is requested or the pass has had its rounds: what was learnt is
    // stored and the transaction is due again at once.
    const bool last_round = stop.stop_requested() || round == kMaxRoundsPerPass;
    // Outcomes may wait for a later commit while the next calls go out at once and nothing
    // else changes (a crash only makes those calls again); a status change is stored before
    // any call it permits, and the successes the engine says the calls wait for.
    const bool calls_follow = !d.calls.empty() && !last_round;
    if (!(tx.global == before) ||
        (!batch.empty() && (!calls_follow || unstored_rounds >= kMaxUnstoredRounds ||
                            CallsWaitForBatch(tx, d, batch)))) {
      std::optional<PassResult> refused =
          co_await StoreRound(tx, before, batch, now, d.needs_operator);
      if (refused) co_return std::move(*refused);
      unstored_rounds = 0;
    } else if (!batch.empty()) {
      ++unstored_rounds;
    }
    // Here `tx` is exactly what is stored, unless calls follow. A finished transaction has no
    // more calls, but the rollbacks a failed TCC or XA was left without (two_phase_engine.h).
    if (d.calls.empty()) {
      // A finished transaction waits for no host: no gate lists it as waiting any more. Nor
      // for a pause signalled while it finished (or before a force stop): nothing reads it.
      if (IsTerminal(tx.global.status)) {
        if (gates_ != nullptr) gates_->Forget(gid);
        if (pauses_ != nullptr) pauses_->Clear(gid);
      }
      co_return PassResult{d.wake_at, std::move(tx)};
    }
    if (last_round) co_return PassResult{now, std::move(tx)};
    const Held held = co_await CallAndRecord(tx, d.calls, batch);
    // A branch failed as many times as the pause-after policy allows: parked for an operator.
    if (held.parked) {
      PassResult parked = co_await Park(tx, *held.parked, batch);
      co_return parked;
    }
    // A held call ends the pass: the transaction waits in its host's gate, costing nothing.
    if (!held.rows.empty()) {
      PassResult ended = co_await EndHeldPass(tx, held, batch);
      co_return ended;
    }
  }
}

}  // namespace settle::drive
