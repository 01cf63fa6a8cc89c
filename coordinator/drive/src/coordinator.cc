#include "settle/drive/coordinator.h"

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <algorithm>

#include "refusals.h"
#include "settle/core/grpc_target.h"
#include "settle/core/log_text.h"
#include "settle/drive/transaction_finished.h"
#include "settle/engine/decision.h"
#include "settle/engine/msg_engine.h"
#include "settle/engine/request_fields.h"
#include "settle/engine/request_fingerprint.h"
#include "settle/engine/request_rules.h"
#include "settle/engine/transaction_types.h"
#include "settle/engine/two_phase_engine.h"
#include "settle/engine/workflow_engine.h"

// GCC 12 mishandles temporaries with destructors that live across a co_await (aggregates,
// braced lists, string literals turned into strings): every argument of a co_await here is
// built in a named variable first.
namespace settle::drive {
namespace {

// A compare-and-set that loses to a concurrent change is retried this many times.
constexpr int kStatusChangeAttempts = 5;

// A transaction's steps: its branches, each of which may have several rows (a saga step's
// action and compensation, a TCC branch's confirm and cancel).
std::size_t StepsOf(const std::vector<storage::BranchRecord>& rows) {
  std::vector<std::string_view> ids;
  ids.reserve(rows.size());
  for (const storage::BranchRecord& row : rows) ids.push_back(row.branch_id);
  std::sort(ids.begin(), ids.end());
  return static_cast<std::size_t>(std::unique(ids.begin(), ids.end()) - ids.begin());
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
      metrics_(metrics),
      ignored_fields_(clock),
      quotas_(settings_.quotas, clock) {}

Status Coordinator::CheckServing() const {
  if (shutting_down_) return Status::Unavailable("the coordinator is shutting down");
  return Status::Ok();
}

Status Coordinator::AdmitFields(std::string_view operation, const engine::UnreadFields& unread) {
  if (unread.empty()) return Status::Ok();
  const std::vector<std::string> unknown = engine::UnknownFields(unread);
  if (unknown.empty()) return Status::Ok();
  if (settings_.strict_requests) return engine::RefuseUnknownField(unknown.front());
  ignored_fields_.Note(operation, unknown);
  return Status::Ok();
}

Status Coordinator::Admit(std::string_view operation, const engine::UnreadFields& unread,
                          const Status& checked) {
  if (Status s = CheckServing(); !s.ok()) return s;
  if (Status s = AdmitFields(operation, unread); !s.ok()) return s;
  return checked;
}

Status Coordinator::CheckCeilings(const engine::RequestOptions& options) const {
  if (Status s = engine::CheckWaitCeiling(options, settings_.max_timeout_to_fail); !s.ok()) {
    return s;
  }
  return engine::CheckCallCeiling(options, settings_.max_branch_timeout);
}

engine::TransactionDefaults Coordinator::Defaults() const {
  return {.request_timeout = settings_.request_timeout,
          .retry_interval = settings_.retry_interval,
          .prepared_timeout_to_fail = settings_.prepared_timeout_to_fail};
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

Status Coordinator::CountHoldings() {
  if (!quotas_.enabled()) return Status::Ok();
  auto usage = store_.store().UnfinishedUsage(std::nullopt);
  if (!usage) return usage.status();
  quotas_.Reset(*usage);
  return Status::Ok();
}

asio::awaitable<Status> Coordinator::Reserve(const engine::Requester& who, std::size_t count,
                                             std::size_t bytes) {
  if (!who.own_only || !quotas_.enabled()) co_return Status::Ok();
  QuotaLedger::Admission admission = quotas_.Admit(who.name, count, bytes);
  if (admission.outcome == QuotaLedger::Admission::Outcome::kReadStore) {
    const std::optional<std::string> creator = who.name;
    auto read = [this, &creator] { return store_.store().UnfinishedUsage(creator); };
    auto usage = co_await store_.Read(read);
    if (!usage) co_return usage.status();
    std::optional<storage::CreatorUsage> held;
    if (!usage->empty()) held = usage->front();
    quotas_.Refresh(who.name, held);
    admission = quotas_.Admit(who.name, count, bytes);
  }
  if (admission.outcome == QuotaLedger::Admission::Outcome::kAdmitted) co_return Status::Ok();
  metrics_.QuotaRefused(admission.kind);
  co_return QuotaRefusal(admission.kind, quotas_.limits());
}

void Coordinator::Unreserve(const engine::Requester& who, std::size_t count, std::size_t bytes,
                            bool stored) {
  if (!who.own_only || !quotas_.enabled()) return;
  quotas_.Settle(who.name, count, bytes, stored);
}

std::string Coordinator::NewGid() { return gids_.Next(); }

asio::awaitable<Status> Coordinator::Prepare(engine::PrepareRequest request) {
  if (Status s = Admit("prepare", request.unread_fields, engine::CheckPrepare(request)); !s.ok()) {
    co_return s;
  }
  if (Status s = CheckCeilings(request.options); !s.ok()) co_return s;
  auto subscribers = co_await ReadSubscribers(engine::TopicsOf(request.steps));
  if (!subscribers) co_return subscribers.status();
  auto built = engine::BuildPrepared(request, *subscribers, Defaults(), clock_.Now());
  if (!built) co_return built.status();
  const Status inserted = co_await InsertPrepared(*built, request);
  if (inserted.code() != StatusCode::kAlreadyExists) co_return inserted;
  const storage::GlobalRecord& g = built->global;
  engine::Repeat repeat{.fingerprint = g.options.request_fingerprint,
                        .rules = engine::RulesOf(g.trans_type).prepare_repeat};
  co_return co_await ExpectStored(g.gid, g.trans_type, GlobalStatus::kPrepared, std::move(repeat),
                                  std::move(request.requester));
}

asio::awaitable<Status> Coordinator::InsertPrepared(storage::Transaction& built,
                                                    const engine::PrepareRequest& request) {
  built.global.creator = request.requester.name;
  built.global.trace = StartSpan(request.trace);
  const storage::GlobalRecord& g = built.global;
  const std::size_t bytes = QuotaLedger::BytesOf(&g, built.branches);
  if (Status s = co_await Reserve(request.requester, 1, bytes); !s.ok()) co_return s;
  storage::WriteBatch insert;
  insert.Add(storage::InsertGlobal{g});
  for (const storage::BranchRecord& row : built.branches) insert.Add(storage::InsertBranch{row});
  const Status inserted = co_await store_.Commit(std::move(insert));
  Unreserve(request.requester, 1, bytes, inserted.ok());
  if (!inserted.ok()) co_return inserted;
  spdlog::info("gid={} trans_type={} prepared trace_id={}", g.gid, ToString(g.trans_type),
               g.trace.trace_id);
  metrics_.TransactionStarted(g.trans_type);
  scheduler_.Schedule(g.gid, *g.next_cron_time);
  co_return inserted;
}

asio::awaitable<Result<engine::TopicSubscribers>> Coordinator::ReadSubscribers(
    std::vector<std::string> topics) {
  engine::TopicSubscribers subscribers;
  for (const std::string& topic : topics) {
    auto read = co_await store_.Read([this, &topic] { return store_.store().Subscribers(topic); });
    if (!read) co_return read.status();
    std::vector<std::string>& urls = subscribers[topic];
    for (const storage::Subscriber& subscriber : *read) urls.push_back(subscriber.url);
  }
  co_return subscribers;
}

asio::awaitable<Status> Coordinator::ExpectStored(std::string gid, TransType type,
                                                  GlobalStatus status, engine::Repeat repeat,
                                                  engine::Requester who) {
  auto existing = co_await store_.Load(gid);
  if (!existing) co_return existing.status();
  if (!existing->has_value()) co_return Status::Unavailable("gid " + gid + " vanished; try again");
  const storage::GlobalRecord& stored = (**existing).global;
  if (!engine::MayTouch(who, stored.creator)) co_return TakenByAnother(gid);
  if (stored.trans_type != type) co_return WrongType(stored, type);
  if (stored.status != status) co_return StatusForbids(stored);
  co_return engine::MatchStored(gid, stored.options.request_fingerprint, repeat);
}

asio::awaitable<Status> Coordinator::RegisterBranch(engine::RegisterBranchRequest request) {
  return RegisterBranchAt(std::move(request), clock_.Now());
}

asio::awaitable<Status> Coordinator::RegisterBranchAt(engine::RegisterBranchRequest request,
                                                      TimePoint now) {
  if (Status s =
          Admit("registerBranch", request.unread_fields, engine::CheckRegisterBranch(request));
      !s.ok()) {
    co_return s;
  }
  if (engine::RulesOf(request.trans_type).branch_urls == engine::BranchUrls::kStepOutcome) {
    co_return co_await RecordStep(std::move(request), now);
  }
  // A gRPC branch gets the prepare's branch headers as metadata: refused now, naming the
  // header, rather than failing at every call of its phase 2. Headers never change after the
  // prepare, so reading them first is enough.
  const std::vector<std::string> urls = {request.confirm_url, request.cancel_url, request.url};
  if (std::any_of(urls.begin(), urls.end(), [](const std::string& url) {
        return !url.empty() && LooksLikeGrpcTarget(url);
      })) {
    auto existing = co_await store_.Load(request.gid);
    if (!existing) co_return existing.status();
    if (!existing->has_value() ||
        !engine::MayTouch(request.requester, (**existing).global.creator)) {
      co_return NoSuchGid(request.gid);
    }
    const Status sendable =
        engine::CheckGrpcHeaders((**existing).global.options.branch_headers, urls);
    if (!sendable.ok()) {
      co_return Status(sendable.code(),
                       sendable.message() + " (set by the prepare of gid " + request.gid + ")");
    }
  }
  std::vector<storage::BranchRecord> rows = engine::RegisteredRows(request, now);
  const std::size_t bytes = QuotaLedger::BytesOf(nullptr, rows);
  storage::WriteBatch batch;
  // First: another caller's transaction is refused as an unknown gid, before any other check
  // could say something of it.
  if (request.requester.own_only) {
    batch.Add(storage::ExpectCreator{request.gid, request.requester.name});
  }
  // Rows of another type's ops would be ignored by the transaction's engine: the branch would
  // never be finished.
  batch.Add(storage::ExpectGlobalType{request.gid, request.trans_type});
  batch.Add(storage::ExpectGlobalStatus{request.gid, {GlobalStatus::kPrepared}});
  for (storage::BranchRecord& row : rows) batch.Add(storage::InsertBranch{std::move(row)});
  batch.Add(storage::LimitBranchRows{request.gid, 2 * settings_.max_registered_branches});
  if (Status quota = co_await Reserve(request.requester, 0, bytes); !quota.ok()) co_return quota;
  Status s = co_await store_.Commit(std::move(batch));
  Unreserve(request.requester, 0, bytes, s.ok());
  if (s.code() == StatusCode::kResourceExhausted)
    s = engine::TooManyBranches(request, settings_.max_registered_branches);
  if (s.code() == StatusCode::kNotFound) co_return NoSuchGid(request.gid);
  if (s.ok()) spdlog::debug("gid={} branch={} registered", request.gid, request.branch_id);
  co_return s;
}

asio::awaitable<Result<Registration>> Coordinator::Register(engine::RegisterBranchRequest request) {
  const bool countersign = settings_.try_countersigner != nullptr &&
                           engine::RulesOf(request.trans_type).countersigns_try &&
                           !request.try_url.empty();
  if (!countersign) {
    if (Status s = co_await RegisterBranch(std::move(request)); !s.ok()) co_return s;
    co_return Registration{};
  }
  // A Try settled vouches for goes to the participant whose confirm and cancel it calls: a
  // countersignature must not freeze anything at a participant phase 2 never reaches.
  if (Status s = engine::CheckSameParticipant(request); !s.ok()) co_return s;
  const std::string gid = request.gid;
  const std::string branch_id = request.branch_id;
  const std::string try_url = request.try_url;
  const TimePoint now = clock_.Now();
  if (Status s = co_await RegisterBranchAt(std::move(request), now); !s.ok()) co_return s;
  // Read back: the Try is countersigned only for the registration that stored the branch
  // (its rows carry this request's time), with the data as stored. A repeat stored nothing:
  // its try URL, which is not stored, is nobody's to vouch for (another client could name
  // another Try), so it is answered without a countersignature.
  auto stored = co_await store_.Load(gid);
  if (!stored) co_return stored.status();
  if (!stored->has_value()) co_return Status::Unavailable("gid " + gid + " vanished; try again");
  const auto row = std::find_if((**stored).branches.begin(), (**stored).branches.end(),
                                [&](const storage::BranchRecord& b) {
                                  return b.branch_id == branch_id && b.op == BranchOp::kConfirm;
                                });
  if (row == (**stored).branches.end()) {
    co_return Status::Unavailable("branch " + branch_id + " of gid " + gid +
                                  " is not stored; try again");
  }
  if (ToUnixMillis(row->create_time) != ToUnixMillis(now)) {
    spdlog::info("gid={} branch={} registered again: no countersignature of its Try", gid,
                 branch_id);
    co_return Registration{};
  }
  Result<calls::TrySignature> signature = settings_.try_countersigner->Countersign(
      {.gid = gid, .branch_id = branch_id, .try_url = try_url, .data = row->data});
  if (!signature) co_return signature.status();
  co_return Registration{.try_signature = std::move(*signature)};
}

asio::awaitable<Status> Coordinator::Submit(engine::SubmitRequest request) {
  if (Status s = Admit("submit", request.unread_fields, engine::CheckSubmit(request)); !s.ok()) {
    co_return s;
  }
  if (Status s = CheckCeilings(request.options); !s.ok()) co_return s;
  const engine::SubmitPlan plan = engine::RulesOf(request.trans_type).submit;
  if (plan.records_outcome) co_return co_await FinishWorkflow(std::move(request));
  const bool wait_result = request.options.wait_result;
  std::string no_reason;
  // What the stored transaction must have been created with, when this request carries it.
  std::optional<engine::Repeat> repeat;
  if (plan.carries_content)
    repeat = engine::Repeat{engine::FingerprintOf(request), plan.repeat_rules};
  if (plan.moves_prepared) {
    // The common case for a message: try the change first, so that its topics are not looked
    // up again.
    const Status changed =
        co_await MovePreparedAndDrive(request.gid, request.trans_type, GlobalStatus::kSubmitted,
                                      no_reason, wait_result, repeat, request.requester);
    if (!plan.creates || changed.code() != StatusCode::kNotFound) co_return changed;
  }
  auto subscribers = co_await ReadSubscribers(engine::TopicsOf(request.steps));
  if (!subscribers) co_return subscribers.status();
  auto built =
      engine::BuildSubmitted(request, *subscribers, Defaults(), clock_.Now(),
                             repeat ? repeat->fingerprint : engine::FingerprintOf(request));
  if (!built) co_return built.status();
  built->global.creator = request.requester.name;
  built->global.trace = StartSpan(request.trace);
  const std::size_t bytes = QuotaLedger::BytesOf(&built->global, built->branches);
  if (Status s = co_await Reserve(request.requester, 1, bytes); !s.ok()) co_return s;
  const Status inserted =
      co_await InsertAndDrive(std::move(*built), wait_result, request.requester, bytes);
  if (inserted.code() != StatusCode::kAlreadyExists) co_return inserted;
  if (plan.moves_prepared) {
    // Prepared or submitted by someone else meanwhile: the same submit again settles it.
    co_return co_await MovePreparedAndDrive(request.gid, request.trans_type,
                                            GlobalStatus::kSubmitted, no_reason, wait_result,
                                            repeat, request.requester);
  }
  // A duplicate submit that matches the stored request re-drives the transaction from its
  // stored rows.
  engine::Repeat same_request = repeat.value_or(engine::Repeat{});
  const Status same =
      co_await ExpectStored(request.gid, request.trans_type, GlobalStatus::kSubmitted,
                            std::move(same_request), request.requester);
  if (!same.ok()) co_return same;
  co_return co_await DriveAfterChange(request.gid, wait_result);
}

asio::awaitable<Status> Coordinator::MovePreparedAndDrive(std::string gid, TransType type,
                                                          GlobalStatus to, std::string reason,
                                                          bool wait_result,
                                                          std::optional<engine::Repeat> repeat,
                                                          engine::Requester who) {
  // Without a claim (a pass of this gid is running, e.g. its timeout abort) the change still
  // happens and the pass reads it back.
  std::optional<Scheduler::PassClaim> claim = scheduler_.TryClaim(gid);
  // Built before the co_await: GCC 12 cannot keep a braced list alive across one.
  StatusChange change{.gid = gid,
                      .type = type,
                      .from = {GlobalStatus::kPrepared},
                      .to = to,
                      .already_done = to,
                      .reason = std::move(reason),
                      .repeat = std::move(repeat),
                      .who = std::move(who)};
  auto changed = co_await ChangeStatus(std::move(change));
  if (!changed) co_return changed.status();  // an unused claim restores the due time
  if (!claim || !changed->has_value()) {
    claim.reset();
    co_return co_await DriveAfterChange(gid, wait_result);
  }
  co_return co_await DriveClaimed(std::move(*claim), std::move(**changed), wait_result);
}

asio::awaitable<Status> Coordinator::InsertAndDrive(storage::Transaction tx, bool wait_result,
                                                    engine::Requester who, std::size_t bytes) {
  const storage::GlobalRecord& g = tx.global;
  storage::WriteBatch batch;
  batch.Add(storage::InsertGlobal{g});
  for (const storage::BranchRecord& row : tx.branches) batch.Add(storage::InsertBranch{row});
  // Claimed before the write, so the first pass can start from these rows: nothing else can
  // drive the transaction in between. A gid that is being driven already is a duplicate.
  std::optional<Scheduler::PassClaim> claim = scheduler_.TryClaim(g.gid);
  const Status inserted = co_await store_.Commit(std::move(batch));
  Unreserve(who, 1, bytes, inserted.ok());
  if (!inserted.ok()) co_return inserted;
  spdlog::info("gid={} trans_type={} submitted steps={} trace_id={}", g.gid, ToString(g.trans_type),
               StepsOf(tx.branches), g.trace.trace_id);
  metrics_.TransactionStarted(g.trans_type);
  if (!claim) co_return co_await DriveAfterChange(g.gid, wait_result);
  co_return co_await DriveClaimed(std::move(*claim), std::move(tx), wait_result);
}

asio::awaitable<Status> Coordinator::Abort(engine::AbortRequest request) {
  if (Status s = Admit("abort", request.unread_fields, engine::CheckAbort(request)); !s.ok()) {
    co_return s;
  }
  std::string reason =
      request.rollback_reason.empty() ? "aborted by the client" : request.rollback_reason;
  const engine::AbortPlan plan = engine::RulesOf(request.trans_type).abort;
  if (plan.drives) {
    std::optional<engine::Repeat> no_repeat;  // an abort carries nothing to compare
    co_return co_await MovePreparedAndDrive(request.gid, request.trans_type, plan.to,
                                            std::move(reason), request.wait_result, no_repeat,
                                            std::move(request.requester));
  }
  StatusChange change{.gid = request.gid,
                      .type = request.trans_type,
                      .from = {GlobalStatus::kPrepared},
                      .to = plan.to,
                      .reason = std::move(reason),
                      .who = std::move(request.requester)};
  const auto changed = co_await ChangeStatus(std::move(change));
  if (!changed) co_return changed.status();
  scheduler_.Schedule(request.gid, clock_.Now());  // lets the scheduler forget it
  co_return Status::Ok();
}

asio::awaitable<Status> Coordinator::Subscribe(engine::SubscribeRequest request) {
  if (Status s = Admit("subscribe", request.unread_fields, engine::CheckSubscription(request));
      !s.ok()) {
    co_return s;
  }
  storage::Subscriber subscriber{request.url, request.remark, clock_.Now(), request.requester.name};
  storage::WriteBatch batch;
  // A topic belongs to the caller whose subscription made it: only that caller (or one that may
  // touch everything) adds receivers of what others publish to it.
  if (request.requester.own_only) {
    batch.Add(storage::ExpectTopicCreator{request.topic, request.requester.name});
  }
  batch.Add(storage::Subscribe{request.topic, std::move(subscriber)});
  const Status s = co_await store_.Commit(std::move(batch));
  if (s.ok()) spdlog::info("topic={} subscribed url={}", request.topic, LogValue(request.url));
  co_return s;
}

asio::awaitable<Status> Coordinator::Unsubscribe(engine::SubscribeRequest request) {
  if (Status s = Admit("unsubscribe", request.unread_fields, engine::CheckUnsubscription(request));
      !s.ok()) {
    co_return s;
  }
  storage::WriteBatch batch;
  if (request.requester.own_only) {
    batch.Add(storage::ExpectTopicCreator{request.topic, request.requester.name});
  }
  batch.Add(storage::Unsubscribe{request.topic, request.url});
  const Status s = co_await store_.Commit(std::move(batch));
  if (s.ok()) spdlog::info("topic={} unsubscribed url={}", request.topic, LogValue(request.url));
  co_return s;
}

asio::awaitable<Status> Coordinator::DeleteTopic(engine::DeleteTopicRequest request) {
  if (Status s =
          Admit("deleteTopic", request.unread_fields, engine::CheckTopic("topic", request.topic));
      !s.ok()) {
    co_return s;
  }
  const std::string& topic = request.topic;
  storage::WriteBatch batch;
  batch.Add(storage::DeleteTopic{topic});
  const Status s = co_await store_.Commit(std::move(batch));
  if (s.ok()) spdlog::info("topic={} deleted", topic);
  co_return s;
}

asio::awaitable<Result<std::vector<storage::Topic>>> Coordinator::Topics(engine::Requester who) {
  auto topics = co_await store_.Read([this] { return store_.store().ListTopics(); });
  if (!topics || !who.own_only) co_return topics;
  std::erase_if(*topics,
                [&who](const storage::Topic& t) { return !engine::MayTouch(who, t.creator()); });
  co_return topics;
}

asio::awaitable<Result<std::vector<storage::UnfinishedCount>>> Coordinator::CountUnfinished() {
  co_return co_await store_.Read([this] { return store_.store().CountUnfinished(); });
}

asio::awaitable<Result<std::optional<storage::Transaction>>> Coordinator::Query(
    std::string gid, engine::Requester who) {
  auto loaded = co_await store_.Load(std::move(gid));
  if (loaded && loaded->has_value() && !engine::MayTouch(who, (**loaded).global.creator)) {
    co_return std::optional<storage::Transaction>();
  }
  co_return loaded;
}

asio::awaitable<Result<storage::ListPage>> Coordinator::List(storage::ListQuery query,
                                                             engine::Requester who) {
  if (who.own_only) query.creator = who.name;
  co_return co_await store_.List(std::move(query));
}

asio::awaitable<Result<std::optional<storage::Transaction>>> Coordinator::ChangeStatus(
    StatusChange change) {
  const std::string& gid = change.gid;
  const GlobalStatus to = change.to;
  const std::string& reason = change.reason;
  for (int attempt = 0; attempt < kStatusChangeAttempts; ++attempt) {
    auto loaded = co_await store_.Load(gid);
    if (!loaded) co_return loaded.status();
    if (!loaded->has_value()) co_return NoSuchGid(gid);
    storage::Transaction tx = std::move(**loaded);
    storage::GlobalRecord& g = tx.global;
    // The creator never changes: checked once loaded, the same as for an unknown gid.
    if (!engine::MayTouch(change.who, g.creator)) co_return NoSuchGid(gid);
    if (change.type && g.trans_type != *change.type) co_return WrongType(g, *change.type);
    if (change.repeat) {
      const Status same = engine::MatchStored(gid, g.options.request_fingerprint, *change.repeat);
      if (!same.ok()) co_return same;
    }
    if (change.already_done && g.status == *change.already_done) {
      co_return std::optional<storage::Transaction>();
    }
    if (std::find(change.from.begin(), change.from.end(), g.status) == change.from.end()) {
      co_return StatusForbids(g);
    }
    const GlobalStatus old = g.status;
    const TimePoint now = clock_.Now();
    engine::ApplyStatusChange(g, to, reason, now);
    g.force_stopped = change.force_stop;
    if (!IsTerminal(to)) g.next_cron_time = now;
    // The branch count makes `tx` exactly what is stored after the commit: a branch
    // registered since the load fails it, and the next attempt loads that branch too.
    storage::WriteBatch batch;
    batch.Add(storage::UpdateGlobal{g, old});
    batch.Add(storage::ExpectBranchCount{gid, tx.branches.size()});
    if (change.audit) {
      change.audit->at = now;
      AddJobStep(batch, *change.audit, change.step);
      batch.Add(storage::RecordAudit{*change.audit});
    }
    const Status s = co_await store_.Commit(std::move(batch));
    if (s.ok()) {
      spdlog::info("gid={} {} -> {}{}{}", gid, ToString(old), ToString(to),
                   reason.empty() ? "" : " reason=", reason.empty() ? "" : LogValue(reason));
      if (IsTerminal(to)) TransactionFinished(tx, now, metrics_, spans_);
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

}  // namespace settle::drive
