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

// A prepared message's back-check row: branch "00", op msg, as DTM calls query_prepared.
constexpr const char* kMsgBackCheckBranch = "00";

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
  // A saga has no deadline unless asked; the others wait for their client (TCC, XA) or for
  // its local transaction (a prepared message) only that long.
  options.timeout_to_fail = requested.timeout_to_fail.value_or(
      type == TransType::kSaga ? Duration(0) : settings_.prepared_timeout_to_fail);
  options.delay = requested.delay.value_or(Duration(0));
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
  const TransType type = request.trans_type;
  storage::Transaction tx;
  tx.global = NewGlobal(request.gid, type, GlobalStatus::kPrepared, request.options, now);
  storage::GlobalRecord& g = tx.global;
  // A prepared transaction is next due when its timeout_to_fail runs out.
  g.next_cron_time = now + g.options.timeout_to_fail;
  if (type == TransType::kMsg) {
    auto rows = co_await MsgRows(g.gid, request.steps, now);
    if (!rows) co_return rows.status();
    tx.branches.push_back(NewBranchRow(g.gid, kMsgBackCheckBranch, BranchOp::kMsg, -1,
                                       request.query_prepared, "", now));
    for (storage::BranchRecord& row : *rows) tx.branches.push_back(std::move(row));
  }
  storage::WriteBatch insert;
  insert.Add(storage::InsertGlobal{g});
  for (const storage::BranchRecord& row : tx.branches) insert.Add(storage::InsertBranch{row});
  const Status inserted = co_await store_.Commit(std::move(insert));
  if (inserted.ok()) {
    spdlog::info("gid={} trans_type={} prepared", g.gid, ToString(type));
    metrics_.TransactionStarted(type);
    scheduler_.Schedule(g.gid, *g.next_cron_time);
    co_return Status::Ok();
  }
  if (inserted.code() != StatusCode::kAlreadyExists) co_return inserted;
  co_return co_await ExpectStored(g.gid, type, GlobalStatus::kPrepared);
}

asio::awaitable<Result<std::vector<storage::BranchRecord>>> Coordinator::MsgRows(
    std::string gid, std::vector<SagaStep> steps, TimePoint now) {
  std::vector<storage::BranchRecord> rows;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    SagaStep& step = steps[i];
    const int seq = static_cast<int>(i);
    const std::string branch_id = BranchIdForIndex(i);
    if (!step.action_url.starts_with(kTopicPrefix)) {
      rows.push_back(NewBranchRow(gid, branch_id, BranchOp::kAction, seq,
                                  std::move(step.action_url), std::move(step.payload), now));
      continue;
    }
    std::string topic = step.action_url.substr(kTopicPrefix.size());
    auto subscribers =
        co_await store_.Read([this, &topic] { return store_.store().Subscribers(topic); });
    if (!subscribers) co_return subscribers.status();
    const std::string path = "steps[" + std::to_string(i) + "].action";
    if (subscribers->empty()) {
      co_return Status::InvalidArgument(path + ": topic " + topic + " has no subscribers");
    }
    // As DTM numbers them: "02" for a topic of one subscriber, "02-01", "02-02", ... for more.
    for (std::size_t j = 0; j < subscribers->size(); ++j) {
      const std::string id =
          subscribers->size() == 1 ? branch_id : branch_id + "-" + BranchIdForIndex(j);
      rows.push_back(
          NewBranchRow(gid, id, BranchOp::kAction, seq, (*subscribers)[j].url, step.payload, now));
    }
  }
  if (rows.size() > kMaxMsgDeliveries) {
    co_return Status::InvalidArgument("steps: the message would make " +
                                      std::to_string(rows.size()) + " deliveries; at most " +
                                      std::to_string(kMaxMsgDeliveries));
  }
  co_return rows;
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
  const bool xa = request.trans_type == TransType::kXa;
  storage::WriteBatch batch;
  // Rows of another type's ops would be ignored by the transaction's engine: the branch would
  // never be finished.
  batch.Add(storage::ExpectGlobalType{request.gid, request.trans_type});
  batch.Add(storage::ExpectGlobalStatus{request.gid, {GlobalStatus::kPrepared}});
  batch.Add(storage::InsertBranch{
      NewBranchRow(request.gid, request.branch_id, xa ? BranchOp::kRollback : BranchOp::kCancel, 0,
                   xa ? request.url : request.cancel_url, request.data, now)});
  batch.Add(storage::InsertBranch{
      NewBranchRow(request.gid, request.branch_id, xa ? BranchOp::kCommit : BranchOp::kConfirm, 0,
                   xa ? request.url : request.confirm_url, request.data, now)});
  batch.Add(storage::LimitBranchRows{request.gid, 2 * settings_.max_tcc_branches});
  Status s = co_await store_.Commit(std::move(batch));
  if (s.code() == StatusCode::kInvalidArgument) {
    s = Status::InvalidArgument(std::string("branch_id: ") + (xa ? "an XA" : "a TCC") +
                                " transaction may have at most " +
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
  if (request.trans_type == TransType::kMsg) co_return co_await SubmitMsg(std::move(request));
  std::string no_reason;
  co_return co_await ChangeTwoPhaseAndDrive(request.gid, request.trans_type,
                                            GlobalStatus::kSubmitted, std::move(no_reason),
                                            request.options.wait_result);
}

asio::awaitable<Status> Coordinator::ChangeTwoPhaseAndDrive(std::string gid, TransType type,
                                                            GlobalStatus to, std::string reason,
                                                            bool wait_result) {
  // Without a claim (a pass of this gid is running, e.g. its timeout abort) the change still
  // happens and the pass reads it back.
  std::optional<Scheduler::PassClaim> claim = scheduler_.TryClaim(gid);
  std::vector<GlobalStatus> from = {GlobalStatus::kPrepared};
  auto changed = co_await ChangeStatus(gid, type, std::move(from), to, to, reason);
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
  const std::string& gid = tx.global.gid;
  for (std::size_t i = 0; i < request.steps.size(); ++i) {
    const SagaStep& step = request.steps[i];
    const int seq = static_cast<int>(i);
    const std::string branch_id = BranchIdForIndex(i);
    tx.branches.push_back(
        NewBranchRow(gid, branch_id, BranchOp::kAction, seq, step.action_url, step.payload, now));
    storage::BranchRecord compensate = NewBranchRow(gid, branch_id, BranchOp::kCompensate, seq,
                                                    step.compensate_url, step.payload, now);
    // A step without a compensate URL has nothing to undo.
    if (step.compensate_url.empty()) compensate.status = BranchStatus::kSucceed;
    tx.branches.push_back(std::move(compensate));
  }
  const bool wait_result = request.options.wait_result;
  const Status inserted = co_await InsertAndDrive(std::move(tx), wait_result);
  if (inserted.code() != StatusCode::kAlreadyExists) co_return inserted;
  // A duplicate submit re-drives the saga from its stored rows, whatever this request says.
  const Status same =
      co_await ExpectStored(request.gid, TransType::kSaga, GlobalStatus::kSubmitted);
  if (!same.ok()) co_return same;
  co_return co_await DriveAfterChange(request.gid, wait_result);
}

asio::awaitable<Status> Coordinator::SubmitMsg(SubmitRequest request) {
  const TimePoint now = clock_.Now();
  const bool wait_result = request.options.wait_result;
  // The submit of a prepared message (the common case) keeps the rows of its prepare, as DTM
  // does: try that first, so that its topics are not looked up again.
  std::string no_reason;
  const Status change = co_await ChangeTwoPhaseAndDrive(
      request.gid, TransType::kMsg, GlobalStatus::kSubmitted, no_reason, wait_result);
  if (change.code() != StatusCode::kNotFound) co_return change;
  // Submitted without a prepare: stored and delivered like a saga.
  storage::Transaction tx;
  tx.global =
      NewGlobal(request.gid, TransType::kMsg, GlobalStatus::kSubmitted, request.options, now);
  auto rows = co_await MsgRows(request.gid, std::move(request.steps), now);
  if (!rows) co_return rows.status();
  tx.branches = std::move(*rows);
  const Status inserted = co_await InsertAndDrive(std::move(tx), wait_result);
  if (inserted.code() != StatusCode::kAlreadyExists) co_return inserted;
  // Prepared or submitted by someone else meanwhile: the same submit again settles it.
  co_return co_await ChangeTwoPhaseAndDrive(request.gid, TransType::kMsg, GlobalStatus::kSubmitted,
                                            no_reason, wait_result);
}

asio::awaitable<Status> Coordinator::InsertAndDrive(storage::Transaction tx, bool wait_result) {
  const storage::GlobalRecord& g = tx.global;
  storage::WriteBatch batch;
  batch.Add(storage::InsertGlobal{g});
  for (const storage::BranchRecord& row : tx.branches) batch.Add(storage::InsertBranch{row});
  // Claimed before the write, so the first pass can start from these rows: nothing else can
  // drive the transaction in between. A gid that is being driven already is a duplicate.
  std::optional<Scheduler::PassClaim> claim = scheduler_.TryClaim(g.gid);
  const Status inserted = co_await store_.Commit(std::move(batch));
  if (!inserted.ok()) co_return inserted;
  spdlog::info("gid={} trans_type={} submitted steps={}", g.gid, ToString(g.trans_type),
               tx.branches.size());
  metrics_.TransactionStarted(g.trans_type);
  if (!claim) co_return co_await DriveAfterChange(g.gid, wait_result);
  co_return co_await DriveClaimed(std::move(*claim), std::move(tx), wait_result);
}

asio::awaitable<Status> Coordinator::Abort(AbortRequest request) {
  if (Status s = CheckServing(); !s.ok()) co_return s;
  std::string reason =
      request.rollback_reason.empty() ? "aborted by the client" : request.rollback_reason;
  if (request.trans_type == TransType::kMsg) {
    // A prepared message has delivered nothing: it simply fails. As in DTM, only a prepared
    // one: a failed message may have delivered steps before it gave up, which an abort's 200
    // must not suggest otherwise.
    std::vector<GlobalStatus> from = {GlobalStatus::kPrepared};
    const auto changed = co_await ChangeStatus(request.gid, TransType::kMsg, std::move(from),
                                               GlobalStatus::kFailed, std::nullopt, reason);
    if (!changed) co_return changed.status();
    scheduler_.Schedule(request.gid, clock_.Now());  // lets the scheduler forget it
    co_return Status::Ok();
  }
  co_return co_await ChangeTwoPhaseAndDrive(request.gid, request.trans_type,
                                            GlobalStatus::kAborting, std::move(reason),
                                            request.wait_result);
}

asio::awaitable<Status> Coordinator::ForceStop(ForceStopRequest request) {
  if (Status s = CheckServing(); !s.ok()) co_return s;
  const std::string& gid = request.gid;
  std::vector<GlobalStatus> from = {GlobalStatus::kPrepared, GlobalStatus::kSubmitted,
                                    GlobalStatus::kAborting};
  // Stored, so that whoever opens the transaction later learns who stopped it and why.
  std::string reason = "stopped by an operator (forceStop";
  if (!request.actor.empty()) reason += " by " + request.actor;
  reason += ")";
  if (!request.reason.empty()) reason += ": " + request.reason;
  const auto changed = co_await ChangeStatus(gid, std::nullopt, std::move(from),
                                             GlobalStatus::kFailed, std::nullopt, reason, true);
  if (!changed) co_return changed.status();
  spdlog::warn("gid={} force-stopped by actor={}; retries stop; reason={}", gid,
               request.actor.empty() ? "unknown" : request.actor, request.reason);
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

asio::awaitable<Status> Coordinator::Subscribe(SubscribeRequest request) {
  if (Status s = CheckServing(); !s.ok()) co_return s;
  storage::Subscriber subscriber{request.url, request.remark, clock_.Now()};
  storage::WriteBatch batch;
  batch.Add(storage::Subscribe{request.topic, std::move(subscriber)});
  const Status s = co_await store_.Commit(std::move(batch));
  if (s.ok()) spdlog::info("topic={} subscribed url={}", request.topic, request.url);
  co_return s;
}

asio::awaitable<Status> Coordinator::Unsubscribe(SubscribeRequest request) {
  if (Status s = CheckServing(); !s.ok()) co_return s;
  storage::WriteBatch batch;
  batch.Add(storage::Unsubscribe{request.topic, request.url});
  const Status s = co_await store_.Commit(std::move(batch));
  if (s.ok()) spdlog::info("topic={} unsubscribed url={}", request.topic, request.url);
  co_return s;
}

asio::awaitable<Status> Coordinator::DeleteTopic(std::string topic) {
  if (Status s = CheckServing(); !s.ok()) co_return s;
  storage::WriteBatch batch;
  batch.Add(storage::DeleteTopic{topic});
  const Status s = co_await store_.Commit(std::move(batch));
  if (s.ok()) spdlog::info("topic={} deleted", topic);
  co_return s;
}

asio::awaitable<Result<std::vector<storage::Topic>>> Coordinator::Topics() {
  co_return co_await store_.Read([this] { return store_.store().ListTopics(); });
}

asio::awaitable<Result<std::vector<storage::UnfinishedCount>>> Coordinator::CountUnfinished() {
  co_return co_await store_.Read([this] { return store_.store().CountUnfinished(); });
}

asio::awaitable<Result<std::optional<storage::Transaction>>> Coordinator::Query(std::string gid) {
  co_return co_await store_.Load(std::move(gid));
}

asio::awaitable<Result<storage::ListPage>> Coordinator::List(storage::ListQuery query) {
  co_return co_await store_.List(std::move(query));
}

asio::awaitable<Result<std::optional<storage::Transaction>>> Coordinator::ChangeStatus(
    std::string gid, std::optional<TransType> type, std::vector<GlobalStatus> from, GlobalStatus to,
    std::optional<GlobalStatus> already_done, std::string reason, bool force_stop) {
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
    g.force_stopped = force_stop;
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
