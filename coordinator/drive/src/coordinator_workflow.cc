// The Coordinator's workflow requests (docs/protocol.md §3.16): prepareWorkflow and the submit
// that records how a workflow ended. Its step registrations go through RegisterBranch.
#include <spdlog/spdlog.h>

#include "refusals.h"
#include "settle/core/log_text.h"
#include "settle/drive/coordinator.h"
#include "settle/drive/transaction_finished.h"
#include "settle/engine/decision.h"
#include "settle/engine/transaction_types.h"
#include "settle/engine/workflow_engine.h"

namespace settle::drive {
namespace {

// A request that loses its compare-and-set to a concurrent change is tried this many times.
constexpr int kAttempts = 5;

}  // namespace

asio::awaitable<Result<storage::Transaction>> Coordinator::PrepareWorkflow(
    engine::PrepareRequest request) {
  if (Status s =
          Admit("prepareWorkflow", request.unread_fields, engine::CheckPrepareWorkflow(request));
      !s.ok()) {
    co_return s;
  }
  if (Status s = CheckCeilings(request.options); !s.ok()) co_return s;
  auto built = engine::BuildPrepared(request, {}, Defaults(), clock_.Now());
  if (!built) co_return built.status();
  const Status inserted = co_await InsertPrepared(*built, request);
  if (inserted.ok()) co_return std::move(*built);
  if (inserted.code() != StatusCode::kAlreadyExists) co_return inserted;
  // Every run of the workflow's client asks again: it gets what is stored, in whatever status,
  // as long as it runs the same workflow on the same input.
  auto loaded = co_await store_.Load(request.gid);
  if (!loaded) co_return loaded.status();
  if (!loaded->has_value()) {
    co_return Status::Unavailable("gid " + request.gid + " vanished; try again");
  }
  storage::Transaction stored = std::move(**loaded);
  if (!engine::MayTouch(request.requester, stored.global.creator)) {
    co_return TakenByAnother(request.gid);
  }
  if (stored.global.trans_type != request.trans_type) {
    co_return WrongType(stored.global, request.trans_type);
  }
  const storage::GlobalRecord& g = built->global;
  const engine::Repeat repeat{.fingerprint = g.options.request_fingerprint,
                              .rules = engine::RulesOf(g.trans_type).prepare_repeat};
  const Status same =
      engine::MatchStored(request.gid, stored.global.options.request_fingerprint, repeat);
  if (!same.ok()) co_return same;
  co_return stored;
}

asio::awaitable<Status> Coordinator::RecordStep(engine::RegisterBranchRequest request,
                                                TimePoint now) {
  const std::string& gid = request.gid;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    auto loaded = co_await store_.Load(gid);
    if (!loaded) co_return loaded.status();
    if (!loaded->has_value()) co_return NoSuchGid(gid);
    const storage::Transaction& tx = **loaded;
    const storage::GlobalRecord& g = tx.global;
    if (!engine::MayTouch(request.requester, g.creator)) co_return NoSuchGid(gid);
    if (g.trans_type != request.trans_type) co_return WrongType(g, request.trans_type);
    if (g.status != GlobalStatus::kPrepared) co_return StatusForbids(g);
    // Recorded already: the same report is answered as the first was, another refused.
    const Status recorded = engine::MatchRecordedStep(tx, request);
    if (recorded.code() != StatusCode::kUnavailable) co_return recorded;
    if (Status in_time = engine::CheckStepInTime(g, request, now); !in_time.ok()) {
      co_return in_time;
    }
    std::vector<storage::BranchRecord> rows = engine::RegisteredRows(request, now);
    const std::size_t bytes = QuotaLedger::BytesOf(nullptr, rows);
    storage::WriteBatch batch;
    batch.Add(storage::ExpectGlobalStatus{gid, {GlobalStatus::kPrepared}});
    // The rows read are all there are: a report stored since (another run's) fails the commit,
    // and the next attempt compares with it.
    batch.Add(storage::ExpectBranchCount{gid, tx.branches.size()});
    for (storage::BranchRecord& row : rows) batch.Add(storage::InsertBranch{std::move(row)});
    batch.Add(storage::LimitBranchRows{gid, 2 * settings_.max_registered_branches});
    // Its client is running it: the resume waits a retry interval from this report.
    batch.Add(storage::RetryNow{gid, now + g.options.retry_interval});
    if (Status quota = co_await Reserve(request.requester, 0, bytes); !quota.ok()) co_return quota;
    const Status s = co_await store_.Commit(std::move(batch));
    Unreserve(request.requester, 0, bytes, s.ok());
    if (s.ok()) {
      spdlog::debug("gid={} step={} op={} recorded {}", gid, request.branch_id, request.op,
                    request.status);
      co_return s;
    }
    if (s.code() == StatusCode::kResourceExhausted) {
      co_return engine::TooManyBranches(request, settings_.max_registered_branches);
    }
    if (s.code() == StatusCode::kNotFound) co_return NoSuchGid(gid);
    if (s.code() != StatusCode::kConflict) co_return s;
  }
  co_return Status::Unavailable("gid " + gid + " kept changing concurrently; try again");
}

asio::awaitable<Status> Coordinator::FinishWorkflow(engine::SubmitRequest request) {
  const engine::WorkflowEnd end = engine::WorkflowEndOf(request);
  const std::string& gid = request.gid;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    auto loaded = co_await store_.Load(gid);
    if (!loaded) co_return loaded.status();
    if (!loaded->has_value()) co_return NoSuchGid(gid);
    storage::Transaction tx = std::move(**loaded);
    storage::GlobalRecord& g = tx.global;
    if (!engine::MayTouch(request.requester, g.creator)) co_return NoSuchGid(gid);
    if (g.trans_type != request.trans_type) co_return WrongType(g, request.trans_type);
    // Ended already: a repeat whose answer was lost is answered again, anything else refused.
    if (g.status != GlobalStatus::kPrepared) co_return engine::MatchEnded(g, end);
    const TimePoint now = clock_.Now();
    engine::ApplyStatusChange(g, end.status, "", now);
    g.rollback_reason = end.rollback_reason;
    g.result = end.result;
    storage::WriteBatch change;
    change.Add(storage::UpdateGlobal{g, GlobalStatus::kPrepared});
    const Status s = co_await store_.Commit(std::move(change));
    if (s.ok()) {
      spdlog::info("gid={} prepared -> {}{}{} trace_id={}", gid, ToString(g.status),
                   g.rollback_reason.empty() ? "" : " reason=",
                   g.rollback_reason.empty() ? "" : LogValue(g.rollback_reason), g.trace.trace_id);
      TransactionFinished(tx, now, metrics_, spans_);
      scheduler_.Schedule(gid, now);  // lets the scheduler forget it
      co_return Status::Ok();
    }
    if (s.code() != StatusCode::kConflict) co_return s;
  }
  co_return Status::Unavailable("gid " + gid + " kept changing concurrently; try again");
}

}  // namespace settle::drive
