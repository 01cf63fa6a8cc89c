#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "settle/storage/records.h"

namespace settle::storage {

// The operations a WriteBatch can hold. Each states its precondition; a batch whose
// precondition fails leaves no trace (see Store::Commit).

// Inserts a new global transaction. Fails with AlreadyExists if the gid is taken.
// The record's id is ignored and assigned by the store.
struct InsertGlobal {
  GlobalRecord record;
};

// The key, within its transaction, of the branch row that holds a body other rows share.
struct BodyHolder {
  std::string branch_id;
  BranchOp op = BranchOp::kAction;

  bool operator==(const BodyHolder&) const = default;
};

// Inserts a branch row. If a row with the same (gid, branch_id, op) exists with the same url
// it is a no-op; with another url, Conflict. The global must exist (NotFound otherwise).
//
// A body is stored once per batch: rows of one transaction whose data are one allocation
// (SharedBytes::SharesWith: a message's deliveries to a topic's subscribers, a TCC branch's
// confirm and cancel) keep it with the first of them, and the others refer to that row; a
// reader gives them all the same bytes. WriteBatch::Add finds them (body_of); writers make rows
// share a body by copying one SharedBytes. The store refuses (Conflict) a row whose holder is
// not there with a body of that length, which only a holder stored by an earlier batch with
// other bytes could cause.
struct InsertBranch {
  BranchRecord record;
  std::optional<BodyHolder> body_of;  // set by WriteBatch::Add
};

// Precondition only: the global exists (NotFound) and its status is one of `allowed`
// (Conflict otherwise). The status holds until the batch commits: a concurrent status change
// (UpdateGlobal) commits before this check or after the whole batch (PostgreSQL: the check
// locks the global row FOR SHARE; SQLite: one writer). A writer that adds rows to a
// transaction in a status adds this first: see ExpectBranchCount.
struct ExpectGlobalStatus {
  std::string gid;
  std::vector<GlobalStatus> allowed;
};

// Precondition only: the global exists (NotFound) and is a transaction of `trans_type`
// (Conflict "gid g1 is a tcc transaction, not xa" otherwise). A writer adding rows of one
// type's ops adds this: another type's engine would never call them.
struct ExpectGlobalType {
  std::string gid;
  TransType trans_type = TransType::kTcc;
};

// Precondition only: the global exists (NotFound) and has exactly `count` branch rows
// (Conflict otherwise). A writer that acts on a transaction it loaded adds this to be sure that
// no branch was registered since. The count sees every branch insert that committed before
// this batch, and one that commits after it sees this batch's status change: PostgreSQL locks
// the global row (FOR NO KEY UPDATE, as an UPDATE does) before it counts, so a registration
// whose ExpectGlobalStatus holds the row FOR SHARE commits first or checks the new status.
struct ExpectBranchCount {
  std::string gid;
  std::size_t count = 0;
};

// Precondition only: the global exists and belongs to `creator` or to nobody
// (GlobalRecord::creator empty); NotFound "gid G not found" otherwise, as for an unknown gid, so
// that a caller learns nothing of another's transaction. A writer acting for a caller that may
// only touch its own transactions adds this first.
struct ExpectCreator {
  std::string gid;
  std::string creator;
};

// Precondition only: the topic does not exist, or belongs to `creator` or to nobody
// (Topic::creator); Conflict naming the topic otherwise. Holds until the batch commits.
struct ExpectTopicCreator {
  std::string topic;
  std::string creator;
};

// Precondition only: the global has at most `max_rows` branch rows, counting those inserted
// earlier in the batch (ResourceExhausted naming branch_id and the limit otherwise, the one
// operation that answers it, so that a caller tells the limit from any other refusal; NotFound
// for an unknown gid). Bounds how large a client can make one transaction.
struct LimitBranchRows {
  std::string gid;
  std::size_t max_rows = 0;
};

// Compare-and-set of a global's mutable fields: status, update_time, finish_time,
// rollback_time, rollback_reason, next_cron_time, stuck and force_stopped are written from `record`
// if the stored status equals `expected` (Conflict otherwise; NotFound if the gid is unknown).
// `record.result` is written when it is not empty (a workflow's result); an empty one leaves the
// stored result as it is.
struct UpdateGlobal {
  GlobalRecord record;
  GlobalStatus expected;
};

// Compare-and-set of a branch row's mutable fields: status, update_time, attempts, failures,
// last_error, next_retry_at and failed_attempts are written from `record` if the stored status
// equals `expected` (Conflict otherwise; NotFound if the row is unknown).
//
// With `read_next_retry_at` (a pass storing what a call answered), also only if the row is
// still as the writer read it: its url `record.url` and its next_retry_at this. Otherwise
// Conflict ("... was redirected or made due since it was read"): an operator's redirect
// (RedirectBranch), Retry now (RetryNow) or resume (ResumeGlobal), or a workflow's step report,
// committed between the read and this batch, and what a call made from the old reading answered
// must not undo it (the pass then starts over from storage).
struct UpdateBranch {
  BranchRecord record;
  BranchStatus expected;
  std::optional<TimePoint> read_next_retry_at;
};

// Operator's "retry now": every `prepared` branch row of the gid gets next_retry_at = at, and
// the global's next_cron_time = at. NotFound if the gid is unknown; Conflict if it is finished.
struct RetryNow {
  std::string gid;
  TimePoint at;
};

// Pauses an unfinished transaction (GlobalRecord::paused = pause). NotFound for an unknown gid;
// Conflict if it is finished, or already paused: then, with `keep_existing` (the pause-after
// policy, which parks it in the commit of the failure that reached the limit), nothing changes
// and the batch goes on. Serialized with a pass's commits as a status change is.
struct PauseGlobal {
  std::string gid;
  Pause pause;
  bool keep_existing = false;
};

// Resumes a paused transaction: its pause is cleared and, as for RetryNow, every `prepared`
// branch row gets next_retry_at = at and the global next_cron_time = at. NotFound for an
// unknown gid; Conflict if it is finished or not paused.
struct ResumeGlobal {
  std::string gid;
  TimePoint at;
};

// An operator's redirect of one branch row (the participant moved): its url becomes `url` and
// it is due at `at`, if it is still pending (status prepared). NotFound for an unknown row;
// Conflict if it is not pending. Rows sharing its body keep sharing it.
struct RedirectBranch {
  std::string gid;
  std::string branch_id;
  BranchOp op = BranchOp::kAction;
  std::string url;
  TimePoint at;
};

// Stores an operator's action (the record's id is ignored and assigned by the store). Never
// refused: it goes into the batch of the change it audits, whose own preconditions decide.
struct RecordAudit {
  AuditEntry entry;
};

// Retention of the audit trail: deletes every entry stored with a time before `cutoff`.
// Operators' actions are few: one statement deletes them all.
struct DeleteAuditBefore {
  TimePoint cutoff;
};

// Bulk jobs (records.h BulkJob). Stores a new job; AlreadyExists, naming it, if its id is taken.
struct InsertJob {
  BulkJob job;
};

// A running job's step, compare-and-set on its cursor: if the job is running and its cursor is
// `expected_cursor`, its cursor becomes `cursor`, acted and skipped grow by these counts,
// last_skip becomes `last_skip` when that is not empty, updated_at becomes `at` and its state
// `state` (kDone for its last step). NotFound for an unknown id; Conflict ("job J moved on")
// when it is not running or its cursor moved: another run took the step. A job's action on a
// transaction commits in one batch with its step, so that each is taken at most once.
struct AdvanceJob {
  std::string id;
  std::int64_t expected_cursor = 0;
  std::int64_t cursor = 0;
  std::int64_t acted = 0;
  std::int64_t skipped = 0;
  std::string last_skip;
  JobState state = JobState::kRunning;
  TimePoint at;
};

// An operator's cancel: a running job becomes cancelled (updated_at = at) and takes no further
// step. NotFound for an unknown id; Conflict if it is not running.
struct CancelJob {
  std::string id;
  TimePoint at;
};

// Retention of jobs: deletes every job that is not running and was last updated before `cutoff`.
struct DeleteJobsBefore {
  TimePoint cutoff;
};

// Retention: deletes a finished (succeed or failed) transaction with every branch row. A gid
// that is not stored is a no-op (already deleted); Conflict if it is not finished, or if it is
// a failed TCC or XA whose cancels (rollbacks) are still to be made (Store::ListUndoneRollbacks).
struct DeleteFinished {
  std::string gid;
};

// Topics: the subscribers a message's `topic://NAME` step goes to. They are kept apart from
// transactions: retention never touches them. Topic names and urls are compared byte for byte.

// Adds `subscriber` to the topic's subscribers, after those already there; a topic that did
// not exist is created. AlreadyExists, naming the topic and the url, if that url already
// subscribes to it (whatever its remark).
struct Subscribe {
  std::string topic;
  Subscriber subscriber;
};

// Removes the url from the topic's subscribers; a topic left without any no longer exists.
// NotFound, naming the topic and the url, if that url does not subscribe to it.
struct Unsubscribe {
  std::string topic;
  std::string url;
};

// Removes the topic with every subscriber. NotFound, naming it, if there is no such topic.
struct DeleteTopic {
  std::string topic;
};

using WriteOp =
    std::variant<InsertGlobal, InsertBranch, ExpectGlobalStatus, ExpectGlobalType,
                 ExpectBranchCount, LimitBranchRows, UpdateGlobal, UpdateBranch, RetryNow,
                 DeleteFinished, Subscribe, Unsubscribe, DeleteTopic, ExpectCreator,
                 ExpectTopicCreator, RecordAudit, DeleteAuditBefore, PauseGlobal, ResumeGlobal,
                 RedirectBranch, InsertJob, AdvanceJob, CancelJob, DeleteJobsBefore>;

// An ordered list of operations that the store applies atomically: all of them, or, if any
// precondition fails or storage fails, none. Later operations see the effects of earlier ones.
// A value: built by one thread, then moved into Store::Commit.
class WriteBatch {
 public:
  WriteBatch() = default;

  template <typename Op>
  WriteBatch& Add(Op op) {
    ops_.emplace_back(std::move(op));
    return *this;
  }
  // Finds the row of this batch whose body `op` shares (InsertBranch::body_of).
  WriteBatch& Add(InsertBranch op) {
    op.body_of.reset();
    if (const void* body = op.record.data.identity(); body != nullptr) {
      const auto [holder, first] = bodies_.try_emplace(
          std::pair{op.record.gid, body}, BodyHolder{op.record.branch_id, op.record.op});
      if (!first) op.body_of = holder->second;
    }
    ops_.emplace_back(std::move(op));
    return *this;
  }

  bool empty() const { return ops_.empty(); }
  std::size_t size() const { return ops_.size(); }
  const std::vector<WriteOp>& ops() const { return ops_; }
  void Clear() {
    ops_.clear();
    bodies_.clear();
  }

 private:
  std::vector<WriteOp> ops_;
  // The first row of each (gid, body allocation) added: what later rows with it refer to.
  std::map<std::pair<std::string, const void*>, BodyHolder> bodies_;
};

}  // namespace settle::storage
