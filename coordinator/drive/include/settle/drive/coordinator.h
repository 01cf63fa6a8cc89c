#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "settle/calls/try_countersigner.h"
#include "settle/core/clock.h"
#include "settle/drive/async_store.h"
#include "settle/drive/coordinator_metrics.h"
#include "settle/drive/gid_generator.h"
#include "settle/drive/ignored_fields_log.h"
#include "settle/drive/scheduler.h"
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
  // Branches one TCC may register; registering more is refused (400).
  std::size_t max_tcc_branches = engine::kMaxTccBranches;
  // A request member settle does not know (engine/request_fields.h) is refused (400) instead
  // of ignored and logged.
  bool strict_requests = false;
  // The longest timeout_to_fail (and message delay) a prepare or submit may ask for; longer is
  // refused (400 naming the field, engine::CheckWaitCeiling). 0: ten years, the protocol's.
  Duration max_timeout_to_fail{7LL * 24 * 3600 * 1000};
  // With it (settled signs: --signing-key), a TCC registration that names its Try is answered
  // with settled's countersignature of that Try (Register). Must outlive the coordinator.
  const calls::TryCountersigner* try_countersigner = nullptr;
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
  asio::awaitable<Status> Abort(engine::AbortRequest request);
  asio::awaitable<Result<std::optional<storage::Transaction>>> Query(std::string gid);
  asio::awaitable<Result<storage::ListPage>> List(storage::ListQuery query);
  // Unfinished transactions counted by type and status (the admin console's summary).
  asio::awaitable<Result<std::vector<storage::UnfinishedCount>>> CountUnfinished();
  // What this coordinator counted since it started (the metrics' counters).
  const CoordinatorMetrics& metrics() const { return metrics_; }
  asio::awaitable<Status> ForceStop(engine::ForceStopRequest request);
  asio::awaitable<Status> ResetNextCronTime(engine::RetryNowRequest request);

  // Topics (docs/protocol.md §3.12): a message step topic://NAME goes to every subscriber the
  // topic has when the message is created. AlreadyExists for a url subscribed already;
  // NotFound for an unknown subscription or topic.
  asio::awaitable<Status> Subscribe(engine::SubscribeRequest request);
  asio::awaitable<Status> Unsubscribe(engine::SubscribeRequest request);
  asio::awaitable<Status> DeleteTopic(engine::DeleteTopicRequest request);
  asio::awaitable<Result<std::vector<storage::Topic>>> Topics();

  // From now on every operation that changes state answers Unavailable.
  void BeginShutdown() { shutting_down_ = true; }

 private:
  engine::TransactionDefaults Defaults() const;
  // RegisterBranch with `now` as its rows' create_time.
  asio::awaitable<Status> RegisterBranchAt(engine::RegisterBranchRequest request, TimePoint now);
  // Stores a new submitted transaction with its rows and drives it. AlreadyExists, unchanged,
  // when the gid is taken.
  asio::awaitable<Status> InsertAndDrive(storage::Transaction tx, bool wait_result);
  // The subscribers of each of `topics` (a message's topic://NAME steps), as stored now.
  asio::awaitable<Result<engine::TopicSubscribers>> ReadSubscribers(
      std::vector<std::string> topics);
  // For a repeated prepare or submit whose insert found the gid taken: OK if the stored
  // transaction is of `type`, in `status` and created by a request that `repeat` matches
  // (the repeat is then harmless), otherwise the Conflict that says why
  // (Unavailable if it vanished meanwhile).
  asio::awaitable<Status> ExpectStored(std::string gid, TransType type, GlobalStatus status,
                                       engine::Repeat repeat);
  // Moves gid from one of the `from` statuses to `to`, retrying when a concurrent change wins
  // the compare-and-set or a branch is registered meanwhile. Answers the transaction as stored
  // by the change; nullopt for one already in `already_done`, left unchanged. One of another
  // type than `type` (when given) is a Conflict. `force_stop`: an operator's forceStop, stored
  // so that the calls it leaves undone stay undone (GlobalRecord::force_stopped).
  // `repeat`, when given: a message's submit, which must match the request that created the
  // message (a Conflict naming the difference otherwise, before anything changes).
  asio::awaitable<Result<std::optional<storage::Transaction>>> ChangeStatus(
      std::string gid, std::optional<TransType> type, std::vector<GlobalStatus> from,
      GlobalStatus to, std::optional<GlobalStatus> already_done, std::string reason,
      bool force_stop = false, std::optional<engine::Repeat> repeat = std::nullopt);
  // Phase two of a TCC or XA, or the submit of a prepared message: ChangeStatus of the gid,
  // which must be of `type` (and match `repeat`, when given), from prepared to `to`,
  // then DriveClaimed from the rows it stored, under a claim taken before the load so that
  // nothing else drives it in between.
  asio::awaitable<Status> ChangeTwoPhaseAndDrive(std::string gid, TransType type, GlobalStatus to,
                                                 std::string reason, bool wait_result,
                                                 std::optional<engine::Repeat> repeat);
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
  // The members of a request nothing read: the unknown ones are refused under
  // strict_requests (InvalidArgument naming the first), otherwise logged (IgnoredFieldsLog).
  Status AdmitFields(std::string_view operation, const engine::UnreadFields& unread);

  AsyncStore& store_;
  Scheduler& scheduler_;
  const Clock& clock_;
  GidGenerator& gids_;
  CoordinatorSettings settings_;
  CoordinatorMetrics& metrics_;
  IgnoredFieldsLog ignored_fields_;
  std::atomic<bool> shutting_down_{false};
};

}  // namespace settle::drive
