#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "settle/core/status.h"
#include "settle/storage/records.h"
#include "settle/storage/store_stats.h"
#include "settle/storage/write_batch.h"

namespace settle::storage {

struct ListQuery {
  std::optional<GlobalStatus> status;
  std::optional<TransType> trans_type;
  std::optional<bool> stuck;
  // true: only unfinished transactions that are paused (GlobalRecord::paused: the parked ones);
  // false: only those that are not (finished ones included).
  std::optional<bool> paused;
  std::size_t limit = 100;
  // Keyset paging: only transactions with id < before_id. Absent: start from the newest.
  std::optional<std::int64_t> before_id;
  // Only the transactions of this creator and those of nobody (GlobalRecord::creator empty).
  std::optional<std::string> creator;

  // The search filters. No index serves them: a List with any of them reads, in id order from
  // before_id, at most kMaxListScan transactions of those the filters above let through, and
  // keeps the ones these let through (see ListPage::next_position).
  // Only gids starting with these bytes (compared exactly, case and all).
  std::optional<std::string> gid_prefix;
  // Only transactions created at or after create_time_start and at or before create_time_end.
  std::optional<TimePoint> create_time_start;
  std::optional<TimePoint> create_time_end;
  // Only unfinished transactions (prepared, submitted, aborting) with a branch row not yet done
  // (status prepared) whose url is on this participant host: those with a call still to make
  // to it. The host is its origin, lower-case, with its port ("http://bank:8080",
  // "https://bank:443", "grpc://bank:50051"), as calls::OriginOf gives it. A url written with the
  // default port left out, or in another case, is on the same host. InvalidArgument from List
  // if it is not such an origin.
  std::optional<std::string> host;

  bool Searches() const { return gid_prefix || create_time_start || create_time_end || host; }
};

// How many transactions one List with search filters reads at most (ListQuery::Searches).
inline constexpr std::size_t kMaxListScan = 5000;

// Which audit entries Store::ListAudit reads: each given filter must match exactly.
struct AuditQuery {
  std::optional<std::string> gid;
  std::optional<std::string> actor;
  std::optional<std::string> action;
  std::size_t limit = 100;                // 1..1000
  std::optional<std::int64_t> before_id;  // keyset paging: only entries with id < before_id
};

struct AuditPage {
  std::vector<AuditEntry> entries;            // newest first (descending id)
  std::optional<std::int64_t> next_position;  // the before_id of the next page, if any
};

struct ListPage {
  std::vector<GlobalRecord> transactions;  // newest first (descending id)
  // The before_id of the next page; absent when this page is the last. A search
  // (ListQuery::Searches) that read kMaxListScan transactions without filling its page answers
  // the page it found, even empty, and the position where its reading stopped.
  std::optional<std::int64_t> next_position;
};

// An unfinished transaction and when it is next due (absent: waiting for the client, which
// only happens for a prepared TCC without a deadline, never in practice).
struct DueEntry {
  std::string gid;
  std::optional<TimePoint> next_cron_time;
};

// How many unfinished transactions of one type are in one status, and how many of those are
// stuck.
struct UnfinishedCount {
  TransType trans_type = TransType::kTcc;
  GlobalStatus status = GlobalStatus::kPrepared;
  std::size_t count = 0;
  std::size_t stuck = 0;
};

// What one creator's unfinished transactions hold (the quotas of docs/operations.md): how
// many, and their bytes: every branch row's url and data, and each transaction's stored
// options (branch_headers, custom_data, ...).
struct CreatorUsage {
  std::string creator;
  std::size_t unfinished = 0;
  std::size_t bytes = 0;

  bool operator==(const CreatorUsage&) const = default;
};

// A failed TCC or XA transaction with a registered branch whose cancel (rollback) was never
// completed, and not because an operator force-stopped it (undone_rollbacks.h).
struct UndoneRollback {
  std::int64_t id = 0;
  std::string gid;
};

// Durable storage of global transactions and their branch rows, and of topic subscriptions.
//
// Thread-safety: every method may be called from any thread at any time.
// Errors: Unavailable when the storage cannot be read or written (the caller answers 503 and
// may retry); Internal for a bug. Nothing else unless the method says so.
class Store {
 public:
  virtual ~Store() = default;

  // Applies every operation of `batch` atomically and durably: OK means the whole batch is
  // committed and synced. If a precondition fails, returns that operation's status
  // (AlreadyExists, NotFound or Conflict, with a message naming the gid, or the topic and url)
  // and nothing of the batch is stored. Batches committed concurrently are serialized in some
  // order.
  virtual Status Commit(const WriteBatch& batch) = 0;

  // Commit without blocking the caller: `done` gets the same status once the batch is durable
  // or refused, on a thread of the store's (or at once on the calling thread). It must not
  // block: a coroutine posts itself back to its own executor. This default commits on the
  // calling thread; stores with a commit thread of their own hand the batch to it.
  virtual void CommitAsync(WriteBatch batch, std::function<void(Status)> done) {
    done(Commit(batch));
  }

  // The transaction with every branch row, or nullopt if the gid is unknown. Reflects every
  // Commit that returned before this call started.
  virtual Result<std::optional<Transaction>> Load(const std::string& gid) = 0;

  // Global records matching `query`, newest first. `query.limit` must be 1..1000.
  virtual Result<ListPage> List(const ListQuery& query) = 0;

  // Every transaction that is not succeed or failed, for the scheduler at start.
  virtual Result<std::vector<DueEntry>> ListUnfinished() = 0;

  // Unfinished transactions counted by type and status (only the pairs that occur), for
  // metrics.
  virtual Result<std::vector<UnfinishedCount>> CountUnfinished() = 0;

  // What each creator's unfinished transactions hold, ordered by creator (those of nobody left
  // out); only `creator`'s when given (nothing when it has none).
  virtual Result<std::vector<CreatorUsage>> UnfinishedUsage(
      const std::optional<std::string>& creator) = 0;

  // The gids of at most `limit` transactions that finished (succeed or failed) before
  // `cutoff`, the longest finished first: what retention deletes next.
  virtual Result<std::vector<std::string>> ListFinishedBefore(TimePoint cutoff,
                                                              std::size_t limit) = 0;

  // Failed TCC and XA transactions that an operator did not force-stop and that still have a
  // cancel (rollback) row not succeeded: their branch's Try stays reserved until the
  // coordinator makes the call. Only those that finished at or after `finished_since` and have
  // an id above `after_id`, in id order, at most `limit` (1..1000). Only a version with the
  // timeout/registration race leaves one; retention keeps them until their calls are made.
  virtual Result<std::vector<UndoneRollback>> ListUndoneRollbacks(TimePoint finished_since,
                                                                  std::int64_t after_id,
                                                                  std::size_t limit) = 0;

  // The topic's subscribers in the order they subscribed (the first first); empty for a topic
  // that does not exist. Reflects every Commit that returned before this call started.
  virtual Result<std::vector<Subscriber>> Subscribers(const std::string& topic) = 0;

  // Every topic, ordered by name (byte order), each with its subscribers in the order they
  // subscribed; from one snapshot.
  virtual Result<std::vector<Topic>> ListTopics() = 0;

  // Operators' actions (RecordAudit) matching `query`, newest first. `query.limit` must be
  // 1..1000 (InvalidArgument naming limit otherwise).
  virtual Result<AuditPage> ListAudit(const AuditQuery& query) = 0;

  // A bulk job (records.h BulkJob), or nullopt for an unknown id. Reflects every Commit that
  // returned before this call started.
  virtual Result<std::optional<BulkJob>> LoadJob(const std::string& id) = 0;
  // Jobs, the latest created first, at most `limit` (1..1000, InvalidArgument naming limit
  // otherwise); only the running ones with `running_only`.
  virtual Result<std::vector<BulkJob>> ListJobs(std::size_t limit, bool running_only) = 0;

  // Counters for metrics: never fails, never blocks on storage.
  virtual StoreStats Stats() const = 0;
};

}  // namespace settle::storage
