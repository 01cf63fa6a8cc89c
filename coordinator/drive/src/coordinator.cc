#include "settle/drive/coordinator.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "settle/engine/decision.h"

// GCC 12 mishandles temporaries with destructors that live across a co_await (aggregates,
// braced lists, string literals turned into strings): every argument of a co_await here is
// built in a named variable first.
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

Coordinator::Coordinator(AsyncStore& store, Scheduler& scheduler, const Clock& clock,
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
  auto unfinished = store_.store().ListUnfinished();
  if (!unfinished) return unfinished.status();
  const TimePoint now = clock_.Now();
  for (const storage::DueEntry& entry : *unfinished) {
    scheduler_.Schedule(entry.gid, entry.next_cron_time.value_or(now));
  }
  return unfinished->size();
}

std::string Coordinator::NewGid() { return gids_.Next(); }

asio::awaitable<Status> Coordinator::Prepare(PrepareRequest request) {
  if (Status s = CheckServing(); !s.ok()) co_return s;
  const TimePoint now = clock_.Now();
  storage::GlobalRecord g =
      NewGlobal(request.gid, TransType::kTcc, GlobalStatus::kPrepared, request.options, now);
  // A prepared TCC is next due when its timeout_to_fail runs out.
  g.next_cron_time = now + g.options.timeout_to_fail;
  storage::WriteBatch insert;
  insert.Add(storage::InsertGlobal{g});
  const Status inserted = co_await store_.Commit(std::move(insert));
  if (inserted.ok()) {
    spdlog::info("gid={} trans_type=tcc prepared", g.gid);
    metrics_.TransactionStarted(TransType::kTcc);
    scheduler_.Schedule(g.gid, *g.next_cron_time);
    co_return Status::Ok();
  }
  if (inserted.code() != StatusCode::kAlreadyExists) co_return inserted;
  co_return co_await ExpectStored(g.gid, TransType::kTcc, GlobalStatus::kPrepared);
}

asio::awaitable<Status> Coordinator::ExpectStored(std::string gid, TransType type,
                                                  GlobalStatus status) {
  auto existing = co_await store_.Load(gid);
  if (!existing) co_return existing.status();
  if (!existing->has_value()) co_return Status::Unavailable("gid " + gid + " vanished; try again");
  const storage::GlobalRecord& stored = (**existing).global;
  if (stored.trans_type != type) co_return WrongType(stored, type);
  if (stored.status != status) co_return StatusForbids(stored);
  co_return Status::Ok();
}

asio::awaitable<Status> Coordinator::RegisterBranch(RegisterBranchRequest request) {
  if (Status s = CheckServing(); !s.ok()) co_return s;
  const TimePoint now = clock_.Now();
  storage::WriteBatch batch;
  batch.Add(storage::ExpectGlobalStatus{request.gid, {GlobalStatus::kPrepared}});
  batch.Add(storage::InsertBranch{NewBranchRow(request.gid, request.branch_id, BranchOp::kCancel, 0,
                                               request.cancel_url, request.data, now)});
  batch.Add(storage::InsertBranch{NewBranchRow(request.gid, request.branch_id, BranchOp::kConfirm,
                                               0, request.confirm_url, request.data, now)});
  batch.Add(storage::LimitBranchRows{request.gid, 2 * settings_.max_tcc_branches});
  Status s = co_await store_.Commit(std::move(batch));
  if (s.code() == StatusCode::kInvalidArgument) {
    s = Status::InvalidArgument("branch_id: a TCC may have at most " +
                                std::to_string(settings_.max_tcc_branches) + " branches; gid " +
                                request.gid + " has them all");
  }
  if (s.code() == StatusCode::kNotFound) co_return NoSuchGid(request.gid);
  if (s.ok()) spdlog::debug("gid={} branch={} registered", request.gid, request.branch_id);
  co_return s;
}

asio::awaitable<Status> Coordinator::Submit(SubmitRequest request) {
  if (Status s = CheckServing(); !s.ok()) co_return s;
  if (request.trans_type == TransType::kSaga) co_return co_await SubmitSaga(std::move(request));
  std::string no_reason;
  co_return co_await ChangeTccAndDrive(request.gid, GlobalStatus::kSubmitted, std::move(no_reason),
                                       request.options.wait_result);
}

asio::awaitable<Status> Coordinator::ChangeTccAndDrive(std::string gid, GlobalStatus to,
                                                       std::string reason, bool wait_result) {
  // Without a claim (a pass of this gid is running, e.g. its timeout abort) the change still
  // happens and the pass reads it back.
  std::optional<Scheduler::PassClaim> claim = scheduler_.TryClaim(gid);
  std::vector<GlobalStatus> from = {GlobalStatus::kPrepared};
  auto changed = co_await ChangeStatus(gid, TransType::kTcc, std::move(from), to, to, reason);
  if (!changed) co_return changed.status();  // an unused claim restores the due time
  if (!claim || !changed->has_value()) {
    claim.reset();
    co_return co_await DriveAfterChange(gid, wait_result);
  }
  co_return co_await DriveClaimed(std::move(*claim), std::move(**changed), wait_result);
}

asio::awaitable<Status> Coordinator::SubmitSaga(SubmitRequest request) {
  const TimePoint now = clock_.Now();
  storage::Transaction tx;
  tx.global =
      NewGlobal(request.gid, TransType::kSaga, GlobalStatus::kSubmitted, request.options, now);
  const storage::GlobalRecord& g = tx.global;
  for (std::size_t i = 0; i < request.steps.size(); ++i) {
    const SagaStep& step = request.steps[i];
    const int seq = static_cast<int>(i);
    const std::string branch_id = BranchIdForIndex(i);
    tx.branches.push_back(
        NewBranchRow(g.gid, branch_id, BranchOp::kAction, seq, step.action_url, step.payload, now));
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
  std::optional<Scheduler::PassClaim> claim = scheduler_.TryClaim(g.gid);
  const Status inserted = co_await store_.Commit(std::move(batch));
  const bool wait_result = request.options.wait_result;
  if (inserted.ok()) {
    spdlog::info("gid={} trans_type=saga submitted steps={}", g.gid, request.steps.size());
    metrics_.TransactionStarted(TransType::kSaga);
    if (!claim) co_return co_await DriveAfterChange(g.gid, wait_result);
    co_return co_await DriveClaimed(std::move(*claim), std::move(tx), wait_result);
  }
  claim.reset();
  if (inserted.code() != StatusCode::kAlreadyExists) co_return inserted;
  // A duplicate submit re-drives the saga from its stored rows, whatever this request says.
  const Status same = co_await ExpectStored(g.gid, TransType::kSaga, GlobalStatus::kSubmitted);
  if (!same.ok()) co_return same;
  co_return co_await DriveAfterChange(g.gid, wait_result);
}

asio::awaitable<Status> Coordinator::Abort(AbortRequest request) {
  if (Status s = CheckServing(); !s.ok()) co_return s;
  std::string reason =
      request.rollback_reason.empty() ? "aborted by the client" : request.rollback_reason;
  co_return co_await ChangeTccAndDrive(request.gid, GlobalStatus::kAborting, std::move(reason),
                                       request.wait_result);
}

asio::awaitable<Status> Coordinator::ForceStop(std::string gid) {
  if (Status s = CheckServing(); !s.ok()) co_return s;
  std::vector<GlobalStatus> from = {GlobalStatus::kPrepared, GlobalStatus::kSubmitted,
                                    GlobalStatus::kAborting};
  std::string reason = "stopped by an operator (forceStop)";
  const auto changed = co_await ChangeStatus(gid, std::nullopt, std::move(from),
                                             GlobalStatus::kFailed, std::nullopt, reason);
  if (!changed) co_return changed.status();
  spdlog::warn("gid={} force-stopped by an operator; retries stop", gid);
  scheduler_.Schedule(gid, clock_.Now());  // lets the scheduler forget it
  co_return Status::Ok();
}

asio::awaitable<Status> Coordinator::ResetNextCronTime(std::string gid) {
  if (Status s = CheckServing(); !s.ok()) co_return s;
  const TimePoint now = clock_.Now();
  storage::WriteBatch retry;
  retry.Add(storage::RetryNow{gid, now});
  const Status s = co_await store_.Commit(std::move(retry));
  if (s.code() == StatusCode::kNotFound) co_return NoSuchGid(gid);
  if (!s.ok()) co_return s;
  spdlog::info("gid={} retry requested now", gid);
  scheduler_.Schedule(gid, now);
  co_return Status::Ok();
}

asio::awaitable<Result<std::optional<storage::Transaction>>> Coordinator::Query(std::string gid) {
  co_return co_await store_.Load(std::move(gid));
}

asio::awaitable<Result<storage::ListPage>> Coordinator::List(storage::ListQuery query) {
  co_return co_await store_.List(std::move(query));
}

asio::awaitable<Result<std::optional<storage::Transaction>>> Coordinator::ChangeStatus(
    std::string gid, std::optional<TransType> type, std::vector<GlobalStatus> from, GlobalStatus to,
    std::optional<GlobalStatus> already_done, std::string reason) {
  for (int attempt = 0; attempt < kStatusChangeAttempts; ++attempt) {
    auto loaded = co_await store_.Load(gid);
    if (!loaded) co_return loaded.status();
    if (!loaded->has_value()) co_return NoSuchGid(gid);
    storage::Transaction tx = std::move(**loaded);
    storage::GlobalRecord& g = tx.global;
    if (type && g.trans_type != *type) co_return WrongType(g, *type);
    if (already_done && g.status == *already_done) {
      co_return std::optional<storage::Transaction>();
    }
    if (std::find(from.begin(), from.end(), g.status) == from.end()) co_return StatusForbids(g);
    const GlobalStatus old = g.status;
    const TimePoint now = clock_.Now();
    ApplyStatusChange(g, to, reason, now);
    if (!IsTerminal(to)) g.next_cron_time = now;
    // The branch count makes `tx` exactly what is stored after the commit: a branch
    // registered since the load fails it, and the next attempt loads that branch too.
    storage::WriteBatch change;
    change.Add(storage::UpdateGlobal{g, old});
    change.Add(storage::ExpectBranchCount{gid, tx.branches.size()});
    const Status s = co_await store_.Commit(std::move(change));
    if (s.ok()) {
      spdlog::info("gid={} {} -> {}{}{}", gid, ToString(old), ToString(to),
                   reason.empty() ? "" : " reason=", reason);
      if (IsTerminal(to)) metrics_.TransactionFinished(g.trans_type, to);
      co_return std::optional<storage::Transaction>(std::move(tx));
    }
    if (s.code() != StatusCode::kConflict) co_return s;
  }
  co_return Status::Unavailable("gid " + gid + " kept changing concurrently; try again");
}

asio::awaitable<Status> Coordinator::DriveAfterChange(std::string gid, bool wait_result) {
  if (!wait_result) {
    scheduler_.Schedule(gid, clock_.Now());
    co_return Status::Ok();
  }
  std::optional<PassResult> pass = co_await scheduler_.RunNow(gid, settings_.wait_result_max_wait);
  if (!pass) {
    scheduler_.Schedule(gid, clock_.Now());
    co_return Status::Pending("gid " + gid + " is still being driven");
  }
  co_return co_await AnswerAfterPass(gid, std::move(*pass));
}

asio::awaitable<Status> Coordinator::DriveClaimed(Scheduler::PassClaim claim,
                                                  storage::Transaction stored, bool wait_result) {
  std::string gid = stored.global.gid;
  if (!wait_result) {
    claim.RunInBackground(std::move(stored));
    co_return Status::Ok();
  }
  PassResult pass = co_await claim.RunHere(std::move(stored));
  co_return co_await AnswerAfterPass(std::move(gid), std::move(pass));
}

asio::awaitable<Status> Coordinator::AnswerAfterPass(std::string gid, PassResult pass) {
  if (pass.final_state) co_return OutcomeOf(*pass.final_state);
  auto loaded = co_await store_.Load(gid);
  if (!loaded) co_return loaded.status();
  if (!loaded->has_value()) co_return NoSuchGid(gid);
  co_return OutcomeOf(**loaded);
}

}  // namespace settle::coordinator
