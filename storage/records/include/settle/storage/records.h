#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "settle/core/clock.h"
#include "settle/core/protocol.h"
#include "settle/core/shared_bytes.h"
#include "settle/core/trace_context.h"

namespace settle::storage {

// The options a transaction runs with, stored with it. The coordinator resolves defaults
// when it creates the transaction, so a stored transaction never depends on server flags
// that may change across restarts.
struct TransOptions {
  Duration timeout_to_fail{0};  // 0: never (saga); TCC always has one once resolved
  Duration request_timeout{0};
  Duration retry_interval{0};
  // Consecutive failed calls of one saga action before the saga aborts, or of one message
  // delivery before the message gives up (failed); 0 = unlimited.
  int retry_limit = 0;
  bool concurrent = false;
  // Message: no delivery before create_time + delay (custom_data's "delay", in seconds).
  Duration delay{0};
  // Saga with concurrent: step index -> indexes of the steps it waits for.
  std::map<int, std::vector<int>> orders;
  std::map<std::string, std::string> branch_headers;
  std::string custom_data;  // as the client sent it
  // custom_data's "pause_after": consecutive failures of one branch after which the
  // transaction is paused (parked) instead of retried; 0: never. Absent: the server's
  // --pause-after.
  std::optional<int> pause_after;
  // What a repeat of the request that created the transaction must match
  // (settle/engine/request_fingerprint.h); empty for one stored before fingerprints existed.
  std::string request_fingerprint;
  // A workflow's name (custom_data's "name"): the op its resume names. Empty for other types.
  std::string workflow_name;

  bool operator==(const TransOptions&) const = default;
};

// Why a transaction is paused (GlobalRecord::paused): by whom, when and why.
struct Pause {
  TimePoint at;
  // The operator (the access token's name; "" without authentication), or "policy" when the
  // pause-after policy parked it (a branch failed its limit of times in a row).
  std::string by;
  std::string reason;

  bool operator==(const Pause&) const = default;
};

// The name Pause::by has when the pause-after policy parked the transaction.
inline constexpr std::string_view kPausedByPolicy = "policy";

struct GlobalRecord {
  std::int64_t id = 0;  // assigned by the store on insert; newer transactions have larger ids
  std::string gid;
  TransType trans_type = TransType::kTcc;
  GlobalStatus status = GlobalStatus::kPrepared;
  TransOptions options;
  TimePoint create_time;
  TimePoint update_time;
  std::optional<TimePoint> finish_time;
  std::optional<TimePoint> rollback_time;
  std::string rollback_reason;
  // When the coordinator must next look at this transaction; none once it is finished.
  std::optional<TimePoint> next_cron_time;
  bool stuck = false;  // a branch has failed the server's stuck threshold times in a row
  // Ended by an operator's forceStop: the calls it left undone stay undone. Every other
  // failed TCC or XA transaction has cancelled (rolled back) every registered branch, and one
  // that has not (left so by a version with the timeout/registration race) is repaired.
  bool force_stopped = false;
  // The caller that created it (api::Caller::name: a token's or a client certificate's name),
  // to whom it belongs (docs/protocol.md §1.6); empty for none: created with authentication
  // off, or stored before transactions had owners (SQLite schema version 7, PostgreSQL 6).
  // Never changes.
  std::string creator;
  // The transaction's span (W3C Trace Context; docs/protocol.md §4.1): its trace,
  // its own span id, the caller's span it is a child of, flags and tracestate. Set when the
  // transaction is created and never changed (UpdateGlobal leaves it as stored); empty for one
  // stored before SQLite schema version 12 / PostgreSQL migration 12. A stored span that does
  // not read back as a valid traceparent loads as empty.
  TraceContext trace;
  // Paused by an operator or the pause-after policy (docs/operations.md, "Pause and resume"):
  // no pass makes a call, changes its status or lets its timeout_to_fail fire until it is
  // resumed. A flag beside the status, which stays DTM's. Written only by PauseGlobal and
  // ResumeGlobal (UpdateGlobal leaves it as stored); a transaction that finished while paused
  // keeps it, and nothing reads it then.
  std::optional<Pause> paused;
  // A workflow's result (docs/protocol.md: the bytes its final submit sent, returned to every
  // later prepareWorkflow), set once by the UpdateGlobal that finishes it and never cleared;
  // empty for every other type and before SQLite schema version 13 / PostgreSQL migration 13.
  // Any bytes. InsertGlobal stores none.
  std::string result;

  bool operator==(const GlobalRecord&) const = default;
};

// A branch call that did not succeed, kept for operators (the admin console's attempt
// history).
struct FailedAttempt {
  TimePoint at;
  std::string error;  // as last_error says it

  bool operator==(const FailedAttempt&) const = default;
};

// One row per (gid, branch_id, op).
struct BranchRecord {
  std::string gid;
  std::string branch_id;
  BranchOp op = BranchOp::kConfirm;
  int seq = 0;  // saga: step index; TCC: 0 (its branches are ordered by branch_id)
  std::string url;
  // The body forwarded to the participant, byte for byte. Rows made from one body share it (a
  // message's deliveries to a topic's subscribers, a TCC branch's confirm and cancel): one
  // allocation in memory, and one copy in the store when they are inserted in one batch.
  SharedBytes data;
  BranchStatus status = BranchStatus::kPrepared;
  TimePoint create_time;
  TimePoint update_time;
  int attempts = 0;  // calls whose outcome was recorded
  int failures = 0;  // consecutive failed calls; drives backoff and the stuck flag
  std::string last_error;
  TimePoint next_retry_at;  // not before this time
  // The latest failed calls, oldest first, at most kMaxFailedAttempts: a call that succeeds
  // at once adds nothing.
  std::vector<FailedAttempt> failed_attempts;
  static constexpr std::size_t kMaxFailedAttempts = 10;

  bool operator==(const BranchRecord&) const = default;
};

// A global transaction with every branch row, ordered by (seq, branch_id, op).
struct Transaction {
  GlobalRecord global;
  std::vector<BranchRecord> branches;
};

// The actions the audit trail records (AuditEntry::action), the one list of their names.
inline constexpr std::string_view kAuditForceStop = "force_stop";
inline constexpr std::string_view kAuditRetryNow = "retry_now";
inline constexpr std::string_view kAuditRetryHost = "retry_host";
inline constexpr std::string_view kAuditPause = "pause";
inline constexpr std::string_view kAuditResume = "resume";
inline constexpr std::string_view kAuditResolve = "resolve";
inline constexpr std::string_view kAuditRedirect = "redirect";
inline constexpr std::string_view kAuditResend = "resend";
// A bulk job (BulkJob) started, cancelled, resumed: the entry's target is the job's id. Each
// transaction a job acts on gets its action's own entry, naming the job in its parameters.
inline constexpr std::string_view kAuditBulk = "bulk";
inline constexpr std::string_view kAuditBulkCancel = "bulk_cancel";
inline constexpr std::string_view kAuditBulkResume = "bulk_resume";
inline constexpr std::string_view kAuditActions[] = {
    kAuditForceStop, kAuditRetryNow,   kAuditRetryHost, kAuditPause,
    kAuditResume,    kAuditResolve,    kAuditRedirect,  kAuditResend,
    kAuditBulk,      kAuditBulkCancel, kAuditBulkResume};

// One action an operator took through the admin API (docs/operations.md, "Audit trail"):
// stored in the same commit as the action's own change, so that an action is audited exactly
// when it took effect.
struct AuditEntry {
  std::int64_t id = 0;  // assigned by the store, increasing: larger is later
  TimePoint at;
  std::string actor;       // the caller's name (a token's); "" without authentication
  std::string action;      // one of kAuditActions
  std::string gid;         // the transaction acted on; "" for an action on a host
  std::string target;      // what else it names (a host); "" for none
  std::string parameters;  // a JSON object: the action's own parameters ("{}" for none)
  std::string reason;      // the operator's reason, as sent

  bool operator==(const AuditEntry&) const = default;
};

// A bulk action (docs/operations.md, "Bulk actions"): an operator's action applied to every
// transaction a filter matched when the job was created, walked newest first (descending id)
// one transaction per commit, and stored so that it goes on after a restart. Each action it
// takes commits with its step (AdvanceJob): after a crash a job resumes from its cursor and
// acts on each transaction at most once.
enum class JobState { kRunning, kDone, kCancelled };

// Stored as "running", "done", "cancelled".
inline std::string_view ToString(JobState s) {
  switch (s) {
    case JobState::kRunning:
      return "running";
    case JobState::kDone:
      return "done";
    case JobState::kCancelled:
      return "cancelled";
  }
  return "running";
}
inline std::optional<JobState> ParseJobState(std::string_view s) {
  for (JobState state : {JobState::kRunning, JobState::kDone, JobState::kCancelled}) {
    if (ToString(state) == s) return state;
  }
  return std::nullopt;
}

struct BulkJob {
  std::string id;  // chosen by the coordinator, unique
  TimePoint created_at;
  TimePoint updated_at;      // its latest step (or its creation, or its cancel)
  std::string actor;         // who started it, as AuditEntry::actor
  std::string action;        // retry_now, pause, resume, force_stop or redirect
  std::string filter;        // a JSON object: which transactions (engine/bulk_filter.h)
  std::string parameters;    // a JSON object: the action's own ("{}" for none)
  std::string reason;        // the operator's reason, as sent
  std::int64_t cursor = 0;   // only transactions with id < cursor are left to walk (0: none)
  std::int64_t matched = 0;  // how many the filter matched when it was created
  std::int64_t acted = 0;    // transactions it acted on
  std::int64_t skipped = 0;  // transactions it matched but could not act on (finished meanwhile)
  std::string last_skip;     // why the latest skip (empty: none)
  JobState state = JobState::kRunning;

  bool operator==(const BulkJob&) const = default;
};

// One url subscribed to a topic (a message's `topic://NAME` step goes to each).
struct Subscriber {
  std::string url;
  std::string remark;  // as the client sent it
  TimePoint create_time;
  // The caller that subscribed it (empty: none, as GlobalRecord::creator). A topic belongs to
  // the creator of its oldest subscription.
  std::string creator;

  bool operator==(const Subscriber&) const = default;
};

// A topic with its subscribers, in the order they subscribed. A topic exists while it has at
// least one subscriber.
struct Topic {
  std::string name;
  std::vector<Subscriber> subscribers;

  // Whose it is: the creator of its oldest subscription (empty: nobody's).
  std::string creator() const { return subscribers.empty() ? "" : subscribers.front().creator; }

  bool operator==(const Topic&) const = default;
};

}  // namespace settle::storage
