#include "settle/coordinator/coordinator.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "settle/coordinator/decision.h"

namespace settle::coordinator {
namespace {

// A compare-and-set that loses to a concurrent change is retried this many times.
constexpr int kStatusChangeAttempts = 5;

Status NoSuchGid(const std::string& gid) {
  return Status::NotFound("no transaction with gid " + gid);
}

Status WrongType(const storage::GlobalRecord& g, TransType wanted) {
  return Status::Conflict("gid " + g.gid + " is a " + std::string(ToString(g.trans_type)) +
                          " transaction, not " + std::string(ToString(wanted)));
}

Status StatusForbids(const storage::GlobalRecord& g) {
  return Status::Conflict("gid " + g.gid + " is " + std::string(ToString(g.status)));
}

storage::BranchRecord NewBranchRow(const std::string& gid, std::string branch_id, BranchOp op,
                                   int seq, std::string url, std::string data, TimePoint now) {
  storage::BranchRecord row;
  row.gid = gid;
  row.branch_id = std::move(branch_id);
  row.op = op;
  row.seq = seq;
  row.url = std::move(url);
  row.data = std::move(data);
  row.create_time = now;
  row.update_time = now;
  row.next_retry_at = now;
  return row;
}

// What a wait_result request answers once its pass is over.
Status OutcomeOf(const storage::Transaction& tx) {
  switch (tx.global.status) {
    case GlobalStatus::kSucceed:
      return Status::Ok();
    case GlobalStatus::kFailed:
      return Status::Conflict(tx.global.rollback_reason.empty() ? "transaction failed"
                                                                : tx.global.rollback_reason);
    default:
      break;
  }
  std::string message = "gid " + tx.global.gid + " is " + std::string(ToString(tx.global.status));
  for (const auto& b : tx.branches) {
    if (b.status == BranchStatus::kPrepared && !b.last_error.empty()) {
      message +=
          "; branch " + b.branch_id + " " + std::string(ToString(b.op)) + ": " + b.last_error;
      break;
    }
  }
  return Status::Pending(message);
}

}  // namespace

Coordinator::Coordinator(storage::Store& store, Scheduler& scheduler, const Clock& clock,
                         GidGenerator& gids, CoordinatorSettings settings,
                         CoordinatorMetrics& metrics)
    : store_(store),
      scheduler_(scheduler),
      clock_(clock),
      gids_(gids),
      settings_(settings),
      metrics_(metrics) {}

Status Coordinator::CheckServing() const {
  if (shutting_down_) return Status::Unavailable("the coordinator is shutting down");
  return Status::Ok();
}

storage::TransOptions Coordinator::ResolveOptions(const RequestOptions& requested,
                                                  TransType type) const {
  storage::TransOptions options;
  options.request_timeout = requested.request_timeout.value_or(settings_.request_timeout);
  options.retry_interval = requested.retry_interval.value_or(settings_.retry_interval);
  options.timeout_to_fail = requested.timeout_to_fail.value_or(
      type == TransType::kTcc ? settings_.tcc_timeout_to_fail : Duration(0));
  options.retry_limit = requested.retry_limit;
  options.branch_headers = requested.branch_headers;
  options.concurrent = requested.concurrent;
  if (requested.concurrent) options.orders = requested.orders;
  options.custom_data = requested.custom_data;
  return options;
}

storage::GlobalRecord Coordinator::NewGlobal(const std::string& gid, TransType type,
                                             GlobalStatus status, const RequestOptions& options,
                                             TimePoint now) const {
  storage::GlobalRecord g;
  g.gid = gid;
  g.trans_type = type;
  g.status = status;
  g.options = ResolveOptions(options, type);
  g.create_time = now;
  g.update_time = now;
  g.next_cron_time = now;
  return g;
}

Result<std::size_t> Coordinator::Resume() {
  auto unfinished = store_.ListUnfinished();
  if (!unfinished) return unfinished.status();
  const TimePoint now = clock_.Now();
  for (const storage::DueEntry& entry : *unfinished) {
    scheduler_.Schedule(entry.gid, entry.next_cron_time.value_or(now));
  }
  return unfinished->size();
}

std::string Coordinator::NewGid() { return gids_.Next(); }

Status Coordinator::Prepare(const PrepareRequest& request) {
  if (Status s = CheckServing(); !s.ok()) return s;
  const TimePoint now = clock_.Now();
  storage::GlobalRecord g =
      NewGlobal(request.gid, TransType::kTcc, GlobalStatus::kPrepared, request.options, now);
  // A prepared TCC is next due when its timeout_to_fail runs out.
  g.next_cron_time = now + g.options.timeout_to_fail;
  const Status inserted = store_.Commit(storage::WriteBatch().Add(storage::InsertGlobal{g}));
  if (inserted.ok()) {
    spdlog::info("gid={} trans_type=tcc prepared", g.gid);
    metrics_.TransactionStarted(TransType::kTcc);
    scheduler_.Schedule(g.gid, *g.next_cron_time);
    return Status::Ok();
  }
  if (inserted.code() != StatusCode::kAlreadyExists) return inserted;
  auto existing = store_.Load(g.gid);
  if (!existing) return existing.status();
  if (!existing->has_value()) return Status::Unavailable("gid " + g.gid + " vanished; try again");
  const storage::GlobalRecord& stored = (**existing).global;
  if (stored.trans_type != TransType::kTcc) return WrongType(stored, TransType::kTcc);
  if (stored.status != GlobalStatus::kPrepared) return StatusForbids(stored);
  return Status::Ok();
}

Status Coordinator::RegisterBranch(const RegisterBranchRequest& request) {
  if (Status s = CheckServing(); !s.ok()) return s;
  const TimePoint now = clock_.Now();
  storage::WriteBatch batch;
  batch.Add(storage::ExpectGlobalStatus{request.gid, {GlobalStatus::kPrepared}});
  batch.Add(storage::InsertBranch{NewBranchRow(request.gid, request.branch_id, BranchOp::kCancel, 0,
                                               request.cancel_url, request.data, now)});
  batch.Add(storage::InsertBranch{NewBranchRow(request.gid, request.branch_id, BranchOp::kConfirm,
                                               0, request.confirm_url, request.data, now)});
  batch.Add(storage::LimitBranchRows{request.gid, 2 * settings_.max_tcc_branches});
  Status s = store_.Commit(batch);
  if (s.code() == StatusCode::kInvalidArgument) {
    s = Status::InvalidArgument("branch_id: a TCC may have at most " +
                                std::to_string(settings_.max_tcc_branches) + " branches; gid " +
                                request.gid + " has them all");
  }
  if (s.code() == StatusCode::kNotFound) return NoSuchGid(request.gid);
  if (s.ok()) spdlog::info("gid={} branch={} registered", request.gid, request.branch_id);
  return s;
}

Status Coordinator::Submit(const SubmitRequest& request) {
  if (Status s = CheckServing(); !s.ok()) return s;
  return request.trans_type == TransType::kSaga ? SubmitSaga(request) : SubmitTcc(request);
}

Status Coordinator::SubmitTcc(const SubmitRequest& request) {
  return ChangeTccAndDrive(request.gid, GlobalStatus::kSubmitted, "",
                           request.options.wait_result);
}

Status Coordinator::ChangeTccAndDrive(const std::string& gid, GlobalStatus to,
                                      const std::string& reason, bool wait_result) {
  // Without a claim (a pass of this gid is running, e.g. its timeout abort) the change still
  // happens and the pass reads it back.
  std::optional<Scheduler::PassClaim> claim = scheduler_.Claim(gid, Duration(0));
  auto changed = ChangeStatus(gid, TransType::kTcc, {GlobalStatus::kPrepared}, to, to, reason);
  if (!changed) return changed.status();  // an unused claim restores the due time
  if (!claim || !changed->has_value()) {
    claim.reset();
    return DriveAfterChange(gid, wait_result);
  }
  return DriveClaimed(std::move(*claim), std::move(**changed), wait_result);
}

Status Coordinator::SubmitSaga(const SubmitRequest& request) {
  const TimePoint now = clock_.Now();
  storage::Transaction tx;
  tx.global =
      NewGlobal(request.gid, TransType::kSaga, GlobalStatus::kSubmitted, request.options, now);
  const storage::GlobalRecord& g = tx.global;
  for (std::size_t i = 0; i < request.steps.size(); ++i) {
    const SagaStep& step = request.steps[i];
    const int seq = static_cast<int>(i);
    const std::string branch_id = BranchIdForIndex(i);
    tx.branches.push_back(NewBranchRow(g.gid, branch_id, BranchOp::kAction, seq, step.action_url,
                                       step.payload, now));
    storage::BranchRecord compensate = NewBranchRow(g.gid, branch_id, BranchOp::kCompensate, seq,
                                                    step.compensate_url, step.payload, now);
    // A step without a compensate URL has nothing to undo.
    if (step.compensate_url.empty()) compensate.status = BranchStatus::kSucceed;
    tx.branches.push_back(std::move(compensate));
  }
  storage::WriteBatch batch;
  batch.Add(storage::InsertGlobal{g});
  for (const storage::BranchRecord& row : tx.branches) batch.Add(storage::InsertBranch{row});
  // Claimed before the write, so the first pass can start from these rows: nothing else can
  // drive the saga in between. A gid that is being driven already is a duplicate submit.
  std::optional<Scheduler::PassClaim> claim = scheduler_.Claim(g.gid, Duration(0));
  const Status inserted = store_.Commit(batch);
  if (inserted.ok()) {
    spdlog::info("gid={} trans_type=saga submitted steps={}", g.gid, request.steps.size());
    metrics_.TransactionStarted(TransType::kSaga);
    if (!claim) return DriveAfterChange(g.gid, request.options.wait_result);
    return DriveClaimed(std::move(*claim), std::move(tx), request.options.wait_result);
  }
  claim.reset();
  if (inserted.code() != StatusCode::kAlreadyExists) return inserted;
  // A duplicate submit re-drives the saga from its stored rows, whatever this request says.
  auto existing = store_.Load(g.gid);
  if (!existing) return existing.status();
  if (!existing->has_value()) return Status::Unavailable("gid " + g.gid + " vanished; try again");
  const storage::GlobalRecord& stored = (**existing).global;
  if (stored.trans_type != TransType::kSaga) return WrongType(stored, TransType::kSaga);
  if (stored.status != GlobalStatus::kSubmitted) return StatusForbids(stored);
  return DriveAfterChange(g.gid, request.options.wait_result);
}

Status Coordinator::Abort(const AbortRequest& request) {
  if (Status s = CheckServing(); !s.ok()) return s;
  const std::string reason =
      request.rollback_reason.empty() ? "aborted by the client" : request.rollback_reason;
  return ChangeTccAndDrive(request.gid, GlobalStatus::kAborting, reason, request.wait_result);
}

Status Coordinator::ForceStop(const std::string& gid) {
  if (Status s = CheckServing(); !s.ok()) return s;
  const auto changed =
      ChangeStatus(gid, std::nullopt,
                   {GlobalStatus::kPrepared, GlobalStatus::kSubmitted, GlobalStatus::kAborting},
                   GlobalStatus::kFailed, std::nullopt, "stopped by an operator (forceStop)");
  if (!changed) return changed.status();
  spdlog::warn("gid={} force-stopped by an operator; retries stop", gid);
  scheduler_.Schedule(gid, clock_.Now());  // lets the scheduler forget it
  return Status::Ok();
}

Status Coordinator::ResetNextCronTime(const std::string& gid) {
  if (Status s = CheckServing(); !s.ok()) return s;
  const TimePoint now = clock_.Now();
  const Status s = store_.Commit(storage::WriteBatch().Add(storage::RetryNow{gid, now}));
  if (s.code() == StatusCode::kNotFound) return NoSuchGid(gid);
  if (!s.ok()) return s;
  spdlog::info("gid={} retry requested now", gid);
  scheduler_.Schedule(gid, now);
  return Status::Ok();
}

Result<std::optional<storage::Transaction>> Coordinator::Query(const std::string& gid) {
  return store_.Load(gid);
}

Result<storage::ListPage> Coordinator::List(const storage::ListQuery& query) {
  return store_.List(query);
}

Result<std::optional<storage::Transaction>> Coordinator::ChangeStatus(
    const std::string& gid, std::optional<TransType> type,
    std::initializer_list<GlobalStatus> from, GlobalStatus to,
    std::optional<GlobalStatus> already_done, const std::string& reason) {
  for (int attempt = 0; attempt < kStatusChangeAttempts; ++attempt) {
    auto loaded = store_.Load(gid);
    if (!loaded) return loaded.status();
    if (!loaded->has_value()) return NoSuchGid(gid);
    storage::Transaction tx = std::move(**loaded);
    storage::GlobalRecord& g = tx.global;
    if (type && g.trans_type != *type) return WrongType(g, *type);
    if (already_done && g.status == *already_done) return std::optional<storage::Transaction>();
    if (std::find(from.begin(), from.end(), g.status) == from.end()) return StatusForbids(g);
    const GlobalStatus old = g.status;
    const TimePoint now = clock_.Now();
    ApplyStatusChange(g, to, reason, now);
    if (!IsTerminal(to)) g.next_cron_time = now;
    // The branch count makes `tx` exactly what is stored after the commit: a branch
    // registered since the load fails it, and the next attempt loads that branch too.
    const Status s = store_.Commit(storage::WriteBatch()
                                       .Add(storage::UpdateGlobal{g, old})
                                       .Add(storage::ExpectBranchCount{gid, tx.branches.size()}));
    if (s.ok()) {
      spdlog::info("gid={} {} -> {}{}{}", gid, ToString(old), ToString(to),
                   reason.empty() ? "" : " reason=", reason);
      if (IsTerminal(to)) metrics_.TransactionFinished(g.trans_type, to);
      return std::optional<storage::Transaction>(std::move(tx));
    }
    if (s.code() != StatusCode::kConflict) return s;
  }
  return Status::Unavailable("gid " + gid + " kept changing concurrently; try again");
}

Status Coordinator::DriveAfterChange(const std::string& gid, bool wait_result) {
  if (!wait_result) {
    scheduler_.Schedule(gid, clock_.Now());
    return Status::Ok();
  }
  std::optional<PassResult> pass = scheduler_.RunNow(gid, settings_.wait_result_max_wait);
  if (!pass) {
    scheduler_.Schedule(gid, clock_.Now());
    return Status::Pending("gid " + gid + " is still being driven");
  }
  return AnswerAfterPass(gid, std::move(*pass));
}

Status Coordinator::DriveClaimed(Scheduler::PassClaim claim, storage::Transaction stored,
                                 bool wait_result) {
  const std::string gid = stored.global.gid;
  if (!wait_result) {
    claim.RunInBackground(std::move(stored));
    return Status::Ok();
  }
  return AnswerAfterPass(gid, claim.RunHere(std::move(stored)));
}

Status Coordinator::AnswerAfterPass(const std::string& gid, PassResult pass) {
  if (pass.final_state) return OutcomeOf(*pass.final_state);
  auto loaded = store_.Load(gid);
  if (!loaded) return loaded.status();
  if (!loaded->has_value()) return NoSuchGid(gid);
  return OutcomeOf(**loaded);
}

}  // namespace settle::coordinator
