#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "settle/calls/host_gates.h"
#include "settle/calls/try_countersigner.h"
#include "settle/core/clock.h"
#include "settle/core/span.h"
#include "settle/drive/async_store.h"
#include "settle/drive/coordinator_metrics.h"
#include "settle/drive/gid_generator.h"
#include "settle/drive/ignored_fields_log.h"
#include "settle/drive/pause_signals.h"
#include "settle/drive/quota_ledger.h"
#include "settle/drive/scheduler.h"
#include "settle/drive/stuck_alerts.h"
#include "settle/engine/request_fingerprint.h"
#include "settle/engine/requests.h"
#include "settle/storage/store.h"

namespace settle::drive {

// Server-wide defaults, applied when a transaction is created and stored with it.
struct CoordinatorSettings {
  Duration request_timeout{3000};
  Duration retry_interval{1000};
  // TCC, XA and message: how long one may stay prepared (saga: no default deadline).
  Duration prepared_timeout_to_fail{35000};
  // How long a wait_result request waits for a pass already running for its gid.
  Duration wait_result_max_wait{30000};
  // Branches one TCC or XA may register, and steps one workflow may record (its rows are
  // bounded by twice this); more is refused (400).
  std::size_t max_registered_branches = engine::kMaxRegisteredBranches;
  // A request member settle does not know (engine/request_fields.h) is refused (400) instead
  // of ignored and logged.
  bool strict_requests = false;
  // The longest timeout_to_fail (and message delay) a prepare or submit may ask for; longer is
  // refused (400 naming the field, engine::CheckWaitCeiling). 0: ten years, the protocol's.
  Duration max_timeout_to_fail{7LL * 24 * 3600 * 1000};
  // The longest request_timeout (one branch call) a prepare or submit may ask for; longer is
  // refused (400 naming the field, engine::CheckCallCeiling). 0: no ceiling.
  Duration max_branch_timeout{5LL * 60 * 1000};
  // With it (settled signs: --signing-key), a TCC registration that names its Try is answered
  // with settled's countersignature of that Try (Register). Must outlive the coordinator.
  const calls::TryCountersigner* try_countersigner = nullptr;
  // The participant hosts' gates (null: none): an operator's Retry now (ResetNextCronTime)
  // calls through a host's open circuit, and a force-stopped transaction waits in no gate.
  // Must outlive the coordinator.
  calls::HostGates* gates = nullptr;
  // Where a pause is signalled to a pass running on this instance (null: a running pass learns
  // of it when it next reads the transaction). Must outlive the coordinator.
  PauseSignals* pauses = nullptr;
  // What one caller may hold in unfinished transactions (a client under authentication:
  // engine::Requester::own_only); a request beyond it is ResourceExhausted. 0: no limit.
  QuotaLimits quotas;
};

// A bulk job's step (bulk_jobs.h): committed with the action the job takes on one transaction,
// whose audit entry names the job ("job" in its parameters). The action and the step are
// stored together or not at all: a job acts on each transaction at most once.
struct JobStep {
  std::string job_id;
  storage::AdvanceJob advance;
};

// A change of one transaction's status (Coordinator::ChangeStatus).
struct StatusChange {
  std::string gid;
  // The type it must be of (a Conflict otherwise); nullopt: any.
  std::optional<TransType> type;
  // The statuses it may be moved from (a Conflict naming the stored one otherwise) and the one
  // it moves to.
  std::vector<GlobalStatus> from;
  GlobalStatus to = GlobalStatus::kSubmitted;
  // A transaction already in this status is left as it is: the change answers nullopt.
  std::optional<GlobalStatus> already_done;
  std::string reason;  // its rollback_reason, for a change that rolls back
  // An operator's forceStop, stored so that the calls it leaves undone stay undone
  // (GlobalRecord::force_stopped).
  bool force_stop = false;
  // A message's submit, which must match the request that created the message (a Conflict
  // naming the difference otherwise, before anything changes).
  std::optional<engine::Repeat> repeat;
  // A transaction `who` may not touch is NotFound, as an unknown gid.
  engine::Requester who;
  // An operator's action: its audit entry, stamped with the change's time, and the bulk job's
  // step, committed with the change.
  std::optional<storage::AuditEntry> audit;
  std::optional<JobStep> step;
};

// Adds `step`, when given, to `batch` and names its job in `audit`'s parameters ("job").
void AddJobStep(storage::WriteBatch& batch, storage::AuditEntry& audit,
                const std::optional<JobStep>& step);

// An operator's audit entry of `action` by `actor` for `reason`, stamped `at`, on the
// transaction `gid` ("" for none) and naming `target` ("" for none; else a host, a branch or a
// bulk job), with no parameters ("{}") for the caller to set.
storage::AuditEntry OperatorAudit(TimePoint at, std::string_view action, std::string gid,
                                  std::string target, std::string actor, std::string reason);

// A bulk job's redirect of one transaction's calls from one participant host to another
// (Coordinator::RedirectHost): `from` and `to` are origins as calls::OriginOf gives them.
struct HostRedirect {
  std::string gid;
  std::string from;
  std::string to;
  std::string actor;
  std::string reason;
};

// What a registration answers: settled's countersignature of the branch's Try, when it signs
// and the registration named the Try (empty otherwise): the fields the initiator sends with it.
struct Registration {
  calls::TrySignature try_signature;
};

// The operations of docs/protocol.md §3. Each builds its change as storage records, commits it
// (durable before it returns OK), then hands the transaction to the scheduler. Each is a
// coroutine on an I/O thread: it awaits the store's commit and, for wait_result, the pass,
// without holding a thread.
//
// Every operation that takes a request checks it with the engine's rules first (the one home
// both front doors share): its values (transaction_types.h) and its members
// (request_fields.h: unknown ones are logged, or refused under strict_requests). A repeated
// prepare or submit must match the request that created the transaction
// (request_fingerprint.h).
//
// Ownership (engine/ownership.h, docs/protocol.md §1.6): each request's Requester is stored as
// the creator of what it creates, and a requester that may touch only its own transactions is
// answered for another caller's gid exactly as for an unknown gid (registerBranch, submit,
// abort: NotFound; Query: nullopt; List leaves it out); a repeated prepare or saga submit of
// another's gid is a Conflict ("gid G already exists"). A topic's subscriptions change only for
// its creator or a requester that may touch everything (a Conflict otherwise); publishing to a
// topic is open to every client.
//
// Quotas (CoordinatorSettings::quotas, quota_ledger.h): a prepare, a submit that creates a
// transaction and a registration are counted for an own-only requester, and refused with
// ResourceExhausted ("quota: ..." naming the flag) beyond them.
//
// Errors: InvalidArgument for requests that contradict themselves; NotFound for an unknown
// gid; Conflict when the transaction's state does not allow the operation; Pending when
// wait_result found the transaction unfinished; Unavailable when storage failed or the
// coordinator is shutting down.
//
// Lifetime: `store`, `scheduler`, `clock`, `gids` and `metrics` must outlive the coordinator,
// and the coordinator must outlive every operation it started (destroy it after the I/O
// threads that run them have stopped). Thread-safety: every operation from any thread, at
// once; Resume before the scheduler starts.
class Coordinator {
 public:
  Coordinator(AsyncStore& store, Scheduler& scheduler, const Clock& clock, GidGenerator& gids,
              CoordinatorSettings settings, CoordinatorMetrics& metrics);

  // Hands every unfinished transaction in storage to the scheduler (resume after a restart).
  // Returns how many. Blocks on the store: for start-up.
  Result<std::size_t> Resume();
  // Counts what each caller holds in unfinished transactions for the quotas, from the store
  // (every instance's, when several share it). Blocks on the store: for start-up.
  Status CountHoldings();

  std::string NewGid();
  asio::awaitable<Status> Prepare(engine::PrepareRequest request);
  asio::awaitable<Status> RegisterBranch(engine::RegisterBranchRequest request);
  // The front doors' registerBranch: RegisterBranch, answered (with
  // CoordinatorSettings::try_countersigner and a TCC request's try_url) with settled's
  // countersignature of its Try, over the data as stored. Only the registration that stored
  // the branch gets one: a repeat (same URLs) is answered without, since the Try URL it names
  // is not stored and nothing says it is the first one's. A try_url on another participant
  // (scheme, host, port) than confirm and cancel is InvalidArgument, before anything is
  // stored. A failure to read the branch back is Unavailable (the branch is registered, and
  // its Try is not countersigned).
  asio::awaitable<Result<Registration>> Register(engine::RegisterBranchRequest request);
  asio::awaitable<Status> Submit(engine::SubmitRequest request);
  // prepareWorkflow (docs/protocol.md §3.16): stores the workflow prepared, or finds it stored
  // (its name and input must match); answers the transaction as stored, with its step log.
  asio::awaitable<Result<storage::Transaction>> PrepareWorkflow(engine::PrepareRequest request);
  asio::awaitable<Status> Abort(engine::AbortRequest request);
  // The transaction, as `who` may see it (nullopt for another caller's, as for an unknown gid).
  // (No default arguments on these coroutines: GCC 12 destroys such a temporary too early.)
  asio::awaitable<Result<std::optional<storage::Transaction>>> Query(std::string gid,
                                                                     engine::Requester who);
  // As seen by a requester that sees everything.
  asio::awaitable<Result<std::optional<storage::Transaction>>> Query(std::string gid) {
    return Query(std::move(gid), engine::Requester{});
  }
  // The transactions `who` may see (its own and nobody's, or every one).
  asio::awaitable<Result<storage::ListPage>> List(storage::ListQuery query, engine::Requester who);
  asio::awaitable<Result<storage::ListPage>> List(storage::ListQuery query) {
    return List(std::move(query), engine::Requester{});
  }
  // Unfinished transactions counted by type and status (the admin console's summary).
  asio::awaitable<Result<std::vector<storage::UnfinishedCount>>> CountUnfinished();
  // What the quotas count for a caller (tests).
  const QuotaLedger& quotas() const { return quotas_; }
  // What this coordinator counted since it started (the metrics' counters).
  const CoordinatorMetrics& metrics() const { return metrics_; }
  // Force stop and Retry now store an audit entry (storage::AuditEntry: the actor, the reason)
  // in the same commit as their change: audited exactly when they took effect.
  asio::awaitable<Status> ForceStop(engine::ForceStopRequest request) {
    return ForceStop(std::move(request), std::optional<JobStep>());
  }
  // Each operator's action that a bulk job takes also comes with the job's step.
  asio::awaitable<Status> ForceStop(engine::ForceStopRequest request, std::optional<JobStep> step);
  // Retry now (docs/protocol.md §3.13): every pending branch call of the transaction is due
  // now, stored, and its pass starts at once; its calls go out even through an open circuit
  // (CoordinatorSettings::gates, HostGates::RetryNow).
  asio::awaitable<Status> ResetNextCronTime(engine::RetryNowRequest request) {
    return ResetNextCronTime(std::move(request), std::optional<JobStep>());
  }
  asio::awaitable<Status> ResetNextCronTime(engine::RetryNowRequest request,
                                            std::optional<JobStep> step);

  // Pause (docs/operations.md, "Pause and resume"): the unfinished transaction keeps its status
  // and is paused (storage::PauseGlobal), audited in the same commit; a pass running for it on
  // this instance stops before its next round of calls. NotFound for an unknown gid; Conflict
  // if it is finished or already paused; InvalidArgument without a reason.
  asio::awaitable<Status> Pause(engine::PauseRequest request) {
    return Pause(std::move(request), std::optional<JobStep>());
  }
  asio::awaitable<Status> Pause(engine::PauseRequest request, std::optional<JobStep> step);
  // Resume: the pause cleared, every pending call due now (storage::ResumeGlobal), audited, and
  // its pass starts at once. NotFound; Conflict if it is finished or not paused.
  asio::awaitable<Status> Resume(engine::PauseRequest request) {
    return Resume(std::move(request), std::optional<JobStep>());
  }
  asio::awaitable<Status> Resume(engine::PauseRequest request, std::optional<JobStep> step);

  // Resolve by hand (docs/operations.md, "Resolving a branch by hand"): the pending call
  // (branch_id, op) is stored as succeed or failed, as if its participant had answered so
  // (engine::CheckResolution says which may be), audited in the same commit, and the
  // transaction's pass starts at once. A pass whose call to it is out meanwhile loses its
  // commit and reads the resolution. NotFound for an unknown gid or row; Conflict when it is
  // not pending or the transaction finished; InvalidArgument naming the field.
  asio::awaitable<Status> Resolve(engine::ResolveRequest request);
  // Redirect: the pending call (branch_id, op) goes to `url` from now on, due at once
  // (storage::RedirectBranch), audited with the old and new urls. The url is checked as a
  // registration's (engine::CheckUrl). Errors as Resolve's.
  asio::awaitable<Status> Redirect(engine::RedirectRequest request);
  // Redirect of a host (a bulk job's redirect, bulk_request.h): every pending call of the
  // unfinished transaction whose url is on origin `request.from` goes to the same path on
  // `request.to`, due at once, audited with each row's old and new url. NotFound for an
  // unknown gid; Conflict when it is finished or has no pending call on that host;
  // InvalidArgument when a new url fails a registration's checks.
  asio::awaitable<Status> RedirectHost(HostRedirect request, std::optional<JobStep> step);

  // Send again a message that gave up delivering (engine::CheckResend): submitted again with
  // its undelivered rows due now and their failure counts started over, audited, driven at
  // once. NotFound; Conflict when it is not such a message (or changed meanwhile).
  asio::awaitable<Status> Resend(engine::PauseRequest request);

  // Stores an operator's action that changes nothing stored (a host's Retry now), stamped now.
  asio::awaitable<Status> RecordAudit(storage::AuditEntry entry);
  // The audit trail (docs/operations.md, "Audit trail"): operators' actions, newest first.
  asio::awaitable<Result<storage::AuditPage>> ListAudit(storage::AuditQuery query);

  // Topics (docs/protocol.md §3.12): a message step topic://NAME goes to every subscriber the
  // topic has when the message is created. AlreadyExists for a url subscribed already;
  // NotFound for an unknown subscription or topic.
  asio::awaitable<Status> Subscribe(engine::SubscribeRequest request);
  asio::awaitable<Status> Unsubscribe(engine::SubscribeRequest request);
  asio::awaitable<Status> DeleteTopic(engine::DeleteTopicRequest request);
  // The topics `who` may see: its own and nobody's, or every one.
  asio::awaitable<Result<std::vector<storage::Topic>>> Topics(engine::Requester who);
  asio::awaitable<Result<std::vector<storage::Topic>>> Topics() {
    return Topics(engine::Requester{});
  }

  // Where operators' actions are reported once stored (null: nowhere). Before serving.
  void SetAlerts(StuckAlerts* alerts) { alerts_ = alerts; }
  // Where the span of a sampled transaction goes when a request (an abort, a forceStop) ends
  // it (transaction_spans.h; null: nowhere). Before serving.
  void SetSpans(SpanSink* spans) { spans_ = spans; }

  // From now on every operation that changes state answers Unavailable.
  void BeginShutdown() { shutting_down_ = true; }
  bool ShuttingDown() const { return shutting_down_; }

 private:
  engine::TransactionDefaults Defaults() const;
  // Stores a transaction a prepare (or prepareWorkflow) built, as `request`'s caller's, and
  // schedules it. AlreadyExists when its gid is taken.
  asio::awaitable<Status> InsertPrepared(storage::Transaction& built,
                                         const engine::PrepareRequest& request);
  // A workflow's submit: records how it ended (coordinator_workflow.cc).
  asio::awaitable<Status> FinishWorkflow(engine::SubmitRequest request);
  // A workflow's registration: records one step, once (coordinator_workflow.cc).
  asio::awaitable<Status> RecordStep(engine::RegisterBranchRequest request, TimePoint now);
  // The transaction `gid` and its row (branch_id, op) for an operator's action on it: NotFound
  // for an unknown gid or row, InvalidArgument for a bad op, and the checks a reason must pass.
  struct TargetRow {
    storage::Transaction tx;
    std::size_t row = 0;
  };
  asio::awaitable<Result<TargetRow>> LoadTargetRow(std::string gid, std::string branch_id,
                                                   std::string op, std::string reason);
  // Commits `batch` with `audit` (stamped `now`) and a bulk job's `step` (AddJobStep): an
  // operator's action, audited exactly when it takes effect. NotFound becomes "no transaction
  // with gid G" when it is about `gid`'s global.
  asio::awaitable<Status> CommitAudited(storage::WriteBatch batch, storage::AuditEntry& audit,
                                        TimePoint now, const std::optional<JobStep>& step);
  // RegisterBranch with `now` as its rows' create_time.
  asio::awaitable<Status> RegisterBranchAt(engine::RegisterBranchRequest request, TimePoint now);
  // Stores a new submitted transaction with its rows and drives it. AlreadyExists, unchanged,
  // when the gid is taken.
  // The rows were reserved for `who` (Reserve): settled once the write is done.
  asio::awaitable<Status> InsertAndDrive(storage::Transaction tx, bool wait_result,
                                         engine::Requester who, std::size_t bytes);
  // Reserves `count` transactions and `bytes` bytes of `who`'s quotas (nothing for a requester
  // the quotas do not count): OK, or ResourceExhausted naming the flag (counted in the
  // metrics). Reads the caller's usage from the store when the count is over a limit.
  asio::awaitable<Status> Reserve(const engine::Requester& who, std::size_t count,
                                  std::size_t bytes);
  // Ends a reservation Reserve made; `stored`: its rows were committed.
  void Unreserve(const engine::Requester& who, std::size_t count, std::size_t bytes, bool stored);
  // The subscribers of each of `topics` (a message's topic://NAME steps), as stored now.
  asio::awaitable<Result<engine::TopicSubscribers>> ReadSubscribers(
      std::vector<std::string> topics);
  // For a repeated prepare or submit whose insert found the gid taken: OK if the stored
  // transaction is of `type`, in `status` and created by a request that `repeat` matches
  // (the repeat is then harmless), otherwise the Conflict that says why
  // (Unavailable if it vanished meanwhile).
  // A requester that may not touch the stored transaction gets the Conflict "gid G already
  // exists", whatever it holds.
  asio::awaitable<Status> ExpectStored(std::string gid, TransType type, GlobalStatus status,
                                       engine::Repeat repeat, engine::Requester who);
  // Makes `change` (StatusChange), retrying when a concurrent change wins the compare-and-set
  // or a branch is registered meanwhile. Answers the transaction as stored by the change;
  // nullopt for one already in `already_done`, left unchanged.
  asio::awaitable<Result<std::optional<storage::Transaction>>> ChangeStatus(StatusChange change);
  // Phase two of a TCC or XA, or the submit of a prepared message: ChangeStatus of the gid,
  // which must be of `type` (and match `repeat`, when given), from prepared to `to`,
  // then DriveClaimed from the rows it stored, under a claim taken before the load so that
  // nothing else drives it in between.
  asio::awaitable<Status> MovePreparedAndDrive(std::string gid, TransType type, GlobalStatus to,
                                               std::string reason, bool wait_result,
                                               std::optional<engine::Repeat> repeat,
                                               engine::Requester who);
  // Drives the transaction now: a pass in this coroutine for wait_result, which then maps the
  // status it reached; otherwise the scheduler starts one.
  asio::awaitable<Status> DriveAfterChange(std::string gid, bool wait_result);
  // The same for a transaction this request stored while holding `claim`: its pass starts
  // from `stored` instead of reading it back.
  asio::awaitable<Status> DriveClaimed(Scheduler::PassClaim claim, storage::Transaction stored,
                                       bool wait_result);
  // What a wait_result request answers after its pass.
  asio::awaitable<Status> AnswerAfterPass(std::string gid, PassResult pass);
  Status CheckServing() const;
  // The server's ceilings of a prepare's or submit's options (max_timeout_to_fail,
  // max_branch_timeout): InvalidArgument naming the first field beyond its own.
  Status CheckCeilings(const engine::RequestOptions& options) const;
  // The members of a request nothing read: the unknown ones are refused under
  // strict_requests (InvalidArgument naming the first), otherwise logged (IgnoredFieldsLog).
  Status AdmitFields(std::string_view operation, const engine::UnreadFields& unread);
  // The prologue of every operation a request starts: Unavailable while shutting down, then
  // its unknown members (AdmitFields), then `checked`, the engine's check of the request.
  Status Admit(std::string_view operation, const engine::UnreadFields& unread,
               const Status& checked);

  AsyncStore& store_;
  Scheduler& scheduler_;
  const Clock& clock_;
  GidGenerator& gids_;
  CoordinatorSettings settings_;
  CoordinatorMetrics& metrics_;
  IgnoredFieldsLog ignored_fields_;
  QuotaLedger quotas_;
  std::atomic<bool> shutting_down_{false};
  StuckAlerts* alerts_ = nullptr;  // SetAlerts; null: operators' actions reported nowhere
  SpanSink* spans_ = nullptr;      // SetSpans; null: no spans
};

}  // namespace settle::drive
