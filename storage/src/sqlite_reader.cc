#include "sqlite_reader.h"

#include <functional>
#include <utility>

#include "failed_attempts_codec.h"
#include "host_url_prefixes.h"
#include "options_codec.h"
#include "shared_bodies.h"
#include "trace_codec.h"
#include "undone_rollbacks.h"

namespace settle::storage {
namespace {

constexpr int kMaxListLimit = 1000;

#define SETTLE_GLOBAL_COLUMNS                                                       \
  "id, gid, trans_type, status, options, create_time, update_time, finish_time, "   \
  "rollback_time, rollback_reason, next_cron_time, stuck, force_stopped, creator, " \
  "paused_at, paused_by, paused_reason, trace, trace_parent, trace_state, result"

constexpr std::string_view kSelectGlobal =
    "SELECT " SETTLE_GLOBAL_COLUMNS " FROM trans_global WHERE gid = ?1";

constexpr std::string_view kSelectBranches =
    "SELECT branch_id, op, seq, url, body, status, create_time, update_time, attempts, "
    "failures, last_error, next_retry_at, failed_attempts, body_of_branch, body_of_op "
    "FROM trans_branch_op "
    "WHERE global_id = ?1 "
    "ORDER BY seq, branch_id, op";

// A paused transaction is left out: it is due only once resumed (schema version 10).
constexpr std::string_view kSelectUnfinished =
    "SELECT gid, next_cron_time FROM trans_global "
    "WHERE status IN ('prepared', 'submitted', 'aborting') AND paused_at IS NULL ORDER BY id";

// Served by the (status, id) index: touches only unfinished transactions.
constexpr std::string_view kCountUnfinished =
    "SELECT trans_type, status, count(*), sum(stuck) FROM trans_global "
    "WHERE status IN ('prepared', 'submitted', 'aborting') GROUP BY trans_type, status";

// Served by the partial index on finish_time (schema version 3). A failed transaction whose
// cancels are still to be made waits for them.
constexpr std::string_view kSelectFinishedBefore =
    "SELECT g.gid FROM trans_global AS g WHERE g.finish_time IS NOT NULL AND g.finish_time < ?1 "
    "AND NOT " SETTLE_UNDONE_ROLLBACKS_OF("g") " ORDER BY g.finish_time LIMIT ?2";

// Served by the partial index of failed TCC and XA transactions that no operator force-stopped
// (schema version 14), whose WHERE the macro's first terms repeat: a sweep reads those that
// finished since the one before, never the succeeded ones, however long the history.
constexpr std::string_view kSelectUndoneRollbacks =
    "SELECT g.id, g.gid FROM trans_global AS g INDEXED BY trans_global_failed_rollbacks "
    "WHERE g.id > ?2 AND g.finish_time >= ?1 AND " SETTLE_UNDONE_ROLLBACKS_OF(
        "g") " ORDER BY g.id LIMIT ?3";

// Topics (schema version 5): the unique (topic, url) index finds a topic's rows; seq orders
// them by subscription.
constexpr std::string_view kSelectSubscribers =
    "SELECT url, remark, create_time, creator FROM topic_subscriber WHERE topic = ?1 "
    "ORDER BY seq";

constexpr std::string_view kSelectTopics =
    "SELECT topic, url, remark, create_time, creator FROM topic_subscriber ORDER BY topic, seq";

// Bulk jobs (schema version 11), the latest created first.
#define SETTLE_JOB_COLUMNS                                                                   \
  "id, created_at, updated_at, actor, action, filter, parameters, reason, cursor, matched, " \
  "acted, skipped, last_skip, state"

constexpr std::string_view kSelectJob =
    "SELECT " SETTLE_JOB_COLUMNS " FROM bulk_jobs WHERE id = ?1";
constexpr std::string_view kSelectJobs =
    "SELECT " SETTLE_JOB_COLUMNS " FROM bulk_jobs ORDER BY created_at DESC, id DESC LIMIT ?1";
constexpr std::string_view kSelectRunningJobs =
    "SELECT " SETTLE_JOB_COLUMNS
    " FROM bulk_jobs WHERE state = 'running' ORDER BY created_at DESC, id DESC LIMIT ?1";
#undef SETTLE_JOB_COLUMNS

// What each creator's unfinished transactions hold (CreatorUsage), in bytes as stored: TEXT
// columns are cast so that length() counts bytes, not characters. Its span (schema version
// 12) counts too.
#define SETTLE_USAGE_SQL(where)                                                           \
  "SELECT g.creator, count(*), "                                                          \
  "sum(length(CAST(g.options AS BLOB)) + length(g.trace) + length(g.trace_parent) + "     \
  "length(CAST(g.trace_state AS BLOB)) + "                                                \
  "coalesce((SELECT sum(length(CAST(b.url AS BLOB)) + "                                   \
  "length(b.body)) FROM trans_branch_op AS b WHERE b.global_id = g.id), 0)) "             \
  "FROM trans_global AS g WHERE g.status IN ('prepared', 'submitted', 'aborting') " where \
  " GROUP BY g.creator ORDER BY g.creator"

constexpr std::string_view kSelectUsage = SETTLE_USAGE_SQL("AND g.creator <> ''");
constexpr std::string_view kSelectUsageOf = SETTLE_USAGE_SQL("AND g.creator = ?1");
#undef SETTLE_USAGE_SQL

std::optional<TimePoint> OptionalTime(const db::SqliteStatement& row, int column) {
  std::optional<std::int64_t> ms = row.ColumnOptionalInt64(column);
  if (!ms) return std::nullopt;
  return FromUnixMillis(*ms);
}

Status Corrupt(const std::string& gid, std::string_view what) {
  return Status::Internal("stored transaction " + gid + " is corrupt: " + std::string(what));
}

Result<GlobalRecord> ReadGlobal(const db::SqliteStatement& row) {
  GlobalRecord g;
  g.id = row.ColumnInt64(0);
  g.gid = row.ColumnBytes(1);
  const std::string trans_type = row.ColumnBytes(2);
  const std::string status = row.ColumnBytes(3);
  std::optional<TransType> parsed_type = ParseTransType(trans_type);
  if (!parsed_type) return Corrupt(g.gid, "unknown trans_type '" + trans_type + "'");
  std::optional<GlobalStatus> parsed_status = ParseGlobalStatus(status);
  if (!parsed_status) return Corrupt(g.gid, "unknown status '" + status + "'");
  g.trans_type = *parsed_type;
  g.status = *parsed_status;
  Result<TransOptions> options = DecodeOptions(row.ColumnBytes(4));
  if (!options) return Corrupt(g.gid, options.status().message());
  g.options = std::move(options).value();
  g.create_time = FromUnixMillis(row.ColumnInt64(5));
  g.update_time = FromUnixMillis(row.ColumnInt64(6));
  g.finish_time = OptionalTime(row, 7);
  g.rollback_time = OptionalTime(row, 8);
  g.rollback_reason = row.ColumnBytes(9);
  g.next_cron_time = OptionalTime(row, 10);
  g.stuck = row.ColumnInt64(11) != 0;
  g.force_stopped = row.ColumnInt64(12) != 0;
  g.creator = row.ColumnBytes(13);
  if (std::optional<TimePoint> paused_at = OptionalTime(row, 14)) {
    g.paused = Pause{*paused_at, row.ColumnBytes(15), row.ColumnBytes(16)};
  }
  g.trace = DecodeTrace(row.ColumnBytes(17), row.ColumnBytes(18), row.ColumnBytes(19));
  g.result = row.ColumnBytes(20);
  return g;
}

// A row of kSelectBranches, which belongs to the transaction `gid`.
Result<BranchRecord> ReadBranch(const std::string& gid, const db::SqliteStatement& row) {
  BranchRecord b;
  b.gid = gid;
  b.branch_id = row.ColumnBytes(0);
  const std::string op = row.ColumnBytes(1);
  std::optional<BranchOp> parsed_op = ParseBranchOp(op);
  if (!parsed_op) return Corrupt(b.gid, "branch " + b.branch_id + " has unknown op '" + op + "'");
  b.op = *parsed_op;
  b.seq = static_cast<int>(row.ColumnInt64(2));
  b.url = row.ColumnBytes(3);
  b.data = row.ColumnBytes(4);
  const std::string status = row.ColumnBytes(5);
  std::optional<BranchStatus> parsed_status = ParseBranchStatus(status);
  if (!parsed_status) {
    return Corrupt(b.gid, "branch " + b.branch_id + " has unknown status '" + status + "'");
  }
  b.status = *parsed_status;
  b.create_time = FromUnixMillis(row.ColumnInt64(6));
  b.update_time = FromUnixMillis(row.ColumnInt64(7));
  b.attempts = static_cast<int>(row.ColumnInt64(8));
  b.failures = static_cast<int>(row.ColumnInt64(9));
  b.last_error = row.ColumnBytes(10);
  b.next_retry_at = FromUnixMillis(row.ColumnInt64(11));
  Result<std::vector<FailedAttempt>> attempts = DecodeFailedAttempts(row.ColumnBytes(12));
  if (!attempts) {
    return Corrupt(b.gid, "branch " + b.branch_id + ": " + attempts.status().message());
  }
  b.failed_attempts = std::move(attempts).value();
  return b;
}

// A row of kSelectJob, kSelectJobs or kSelectRunningJobs.
Result<BulkJob> ReadJob(const db::SqliteStatement& row) {
  BulkJob j;
  j.id = row.ColumnBytes(0);
  j.created_at = FromUnixMillis(row.ColumnInt64(1));
  j.updated_at = FromUnixMillis(row.ColumnInt64(2));
  j.actor = row.ColumnBytes(3);
  j.action = row.ColumnBytes(4);
  j.filter = row.ColumnBytes(5);
  j.parameters = row.ColumnBytes(6);
  j.reason = row.ColumnBytes(7);
  j.cursor = row.ColumnInt64(8);
  j.matched = row.ColumnInt64(9);
  j.acted = row.ColumnInt64(10);
  j.skipped = row.ColumnInt64(11);
  j.last_skip = row.ColumnBytes(12);
  const std::string state = row.ColumnBytes(13);
  std::optional<JobState> parsed = ParseJobState(state);
  if (!parsed) {
    return Status::Internal("stored job " + j.id + " is corrupt: unknown state '" + state + "'");
  }
  j.state = *parsed;
  return j;
}

// A subscriber from the row's columns `first` to `first` + 3: url, remark, create_time,
// creator.
Subscriber ReadSubscriber(const db::SqliteStatement& row, int first) {
  return Subscriber{row.ColumnBytes(first), row.ColumnBytes(first + 1),
                    FromUnixMillis(row.ColumnInt64(first + 2)), row.ColumnBytes(first + 3)};
}

// The WHERE clause of List's indexed filters (status, trans_type, stuck, creator, before_id).
// Parameters: ?1 status, ?2 trans_type, ?3 creator, ?4 before_id. `stuck` is written as a
// literal so that the partial index on stuck rows applies.
//
// Without ANALYZE statistics SQLite cannot tell which filter is selective, so the statement
// says it: a unary + keeps a column's index out of the plan. The most selective filter
// drives the index scan in id order: stuck=1 (rare), else the status, else the trans type;
// stuck=0 matches nearly every row and is checked while walking the primary key backwards.
std::string IndexedFilters(const ListQuery& q) {
  const bool by_paused = q.paused.value_or(false);
  const bool by_stuck = q.stuck.value_or(false) && !by_paused;
  const bool by_status = q.status && !by_stuck && !by_paused;
  const bool by_type = q.trans_type && !by_stuck && !by_status && !by_paused;
  std::string sql = " WHERE 1";
  if (q.status) sql += by_status ? " AND status = ?1" : " AND +status = ?1";
  if (q.trans_type) sql += by_type ? " AND trans_type = ?2" : " AND +trans_type = ?2";
  if (q.stuck)
    sql += *q.stuck ? (by_stuck ? " AND stuck = 1" : " AND +stuck = 1") : " AND +stuck = 0";
  // The parked ones: paused and unfinished (the partial index of schema version 10).
  if (q.paused) {
    sql += *q.paused
               ? " AND paused_at IS NOT NULL AND +status IN ('prepared', 'submitted', 'aborting')"
               : " AND +paused_at IS NULL";
  }
  // A client's own and nobody's: each an index range of (creator, id), which SQLite's OR
  // optimization walks together.
  if (q.creator) sql += " AND (creator = ?3 OR creator = '')";
  if (q.before_id) sql += " AND id < ?4";
  return sql;
}

// The search filters (ListQuery::Searches) on rows named g. Parameters: ?7 gid_prefix,
// ?8 create_time_start, ?9 create_time_end, ?10... the host's url prefixes.
std::string SearchFilters(const ListQuery& q, std::size_t host_prefixes) {
  std::string sql = " WHERE 1";
  if (q.gid_prefix) sql += " AND substr(g.gid, 1, length(?7)) = ?7";
  if (q.create_time_start) sql += " AND g.create_time >= ?8";
  if (q.create_time_end) sql += " AND g.create_time <= ?9";
  if (q.host) {
    // Only an unfinished transaction still calls its branches.
    sql += " AND g.status IN ('prepared', 'submitted', 'aborting')";
    sql +=
        " AND EXISTS (SELECT 1 FROM trans_branch_op AS b WHERE b.global_id = g.id AND b.status = '";
    sql += ToString(BranchStatus::kPrepared);
    sql += "' AND (";
    for (std::size_t i = 0; i < host_prefixes; ++i) {
      const std::string n = std::to_string(10 + i);
      sql += (i ? " OR " : "");
      sql += "(substr(lower(b.url), 1, length(?" + n + ")) = ?" + n +
             " AND substr(b.url, length(?" + n + ") + 1, 1) IN ('', '/', '?'))";
    }
    sql += "))";
  }
  return sql;
}

// The List statement for the filters present; each shape is its own cached statement.
// ?5 is the limit. A search reads the newest ?6 rows the indexed filters let through and keeps
// those the search filters let through.
std::string ListSql(const ListQuery& q, std::size_t host_prefixes) {
  if (!q.Searches()) {
    return "SELECT " SETTLE_GLOBAL_COLUMNS " FROM trans_global" + IndexedFilters(q) +
           " ORDER BY id DESC LIMIT ?5";
  }
  return "SELECT " SETTLE_GLOBAL_COLUMNS " FROM (SELECT * FROM trans_global" + IndexedFilters(q) +
         " ORDER BY id DESC LIMIT ?6) AS g" + SearchFilters(q, host_prefixes) +
         " ORDER BY id DESC LIMIT ?5";
}

// How many rows a search read and the lowest id among them: where the next page starts when
// the reading ran out before the page was full.
std::string ScanFloorSql(const ListQuery& q) {
  return "SELECT count(*), min(id) FROM (SELECT id FROM trans_global" + IndexedFilters(q) +
         " ORDER BY id DESC LIMIT ?6)";
}

void BindIndexedFilters(db::SqliteStatement& stmt, const ListQuery& query) {
  if (query.status) stmt.BindText(1, ToString(*query.status));
  if (query.trans_type) stmt.BindText(2, ToString(*query.trans_type));
  if (query.creator) stmt.BindText(3, *query.creator);
  if (query.before_id) stmt.BindInt64(4, *query.before_id);
  if (query.Searches()) stmt.BindInt64(6, static_cast<std::int64_t>(kMaxListScan));
}

Status ReadAll(db::SqliteStatement& stmt,
               const std::function<Status(const db::SqliteStatement&)>& f) {
  for (;;) {
    Result<bool> row = stmt.Step();
    if (!row) return row.status();
    if (!*row) return Status::Ok();
    if (Status s = f(stmt); !s.ok()) return s;
  }
}

}  // namespace

// A connection borrowed from the pool, returned on destruction outside any transaction.
class SqliteReader::Lease {
 public:
  Lease(SqliteReader& pool, std::unique_ptr<db::SqliteConnection> connection)
      : pool_(pool), connection_(std::move(connection)) {}
  ~Lease() {
    if (connection_->InTransaction()) connection_->Run("ROLLBACK").IgnoreError();
    pool_.Release(std::move(connection_));
  }
  db::SqliteConnection& operator*() { return *connection_; }
  db::SqliteConnection* operator->() { return connection_.get(); }

 private:
  SqliteReader& pool_;
  std::unique_ptr<db::SqliteConnection> connection_;
};

SqliteReader::SqliteReader(std::string path, int busy_timeout_ms)
    : path_(std::move(path)), busy_timeout_ms_(busy_timeout_ms) {}

SqliteReader::~SqliteReader() = default;

Result<std::unique_ptr<db::SqliteConnection>> SqliteReader::Acquire() {
  {
    std::lock_guard lock(mutex_);
    if (!idle_.empty()) {
      std::unique_ptr<db::SqliteConnection> connection = std::move(idle_.back());
      idle_.pop_back();
      return connection;
    }
  }
  // Opened outside the lock: opening reads the file and must not hold up other readers.
  return db::SqliteConnection::Open(path_, SQLITE_OPEN_READONLY, busy_timeout_ms_);
}

void SqliteReader::Release(std::unique_ptr<db::SqliteConnection> connection) {
  std::lock_guard lock(mutex_);
  idle_.push_back(std::move(connection));
}

Result<std::optional<Transaction>> SqliteReader::Load(const std::string& gid) {
  Result<std::unique_ptr<db::SqliteConnection>> acquired = Acquire();
  if (!acquired) return acquired.status();
  Lease c(*this, std::move(acquired).value());

  // One read transaction: the global and its branches come from the same snapshot.
  if (Status s = c->Run("BEGIN"); !s.ok()) return s;
  Transaction t;
  {
    Result<db::SqliteStatement> stmt = c->Prepare(kSelectGlobal);
    if (!stmt) return stmt.status();
    stmt->BindText(1, gid);
    Result<bool> row = stmt->Step();
    if (!row) return row.status();
    if (!*row) return std::optional<Transaction>();
    Result<GlobalRecord> global = ReadGlobal(*stmt);
    if (!global) return global.status();
    t.global = std::move(global).value();
  }
  {
    Result<db::SqliteStatement> stmt = c->Prepare(kSelectBranches);
    if (!stmt) return stmt.status();
    stmt->BindInt64(1, t.global.id);
    std::vector<std::optional<BodyHolder>> holders;
    Status s = ReadAll(*stmt, [&t, &holders](const db::SqliteStatement& row) {
      Result<BranchRecord> branch = ReadBranch(t.global.gid, row);
      if (!branch) return branch.status();
      t.branches.push_back(std::move(branch).value());
      holders.push_back(StoredBodyHolder(row.ColumnBytes(13), row.ColumnBytes(14)));
      return Status::Ok();
    });
    if (!s.ok()) return s;
    if (s = ShareBodies(t.global.gid, t.branches, holders); !s.ok()) return s;
  }
  if (Status s = c->Run("COMMIT"); !s.ok()) return s;
  return std::optional<Transaction>(std::move(t));
}

Result<ListPage> SqliteReader::List(const ListQuery& query) {
  if (query.limit < 1 || query.limit > kMaxListLimit) {
    return Status::InvalidArgument("limit: must be 1.." + std::to_string(kMaxListLimit) + ", got " +
                                   std::to_string(query.limit));
  }
  std::vector<std::string> host_prefixes;
  if (query.host) {
    Result<std::vector<std::string>> prefixes = HostUrlPrefixes(*query.host);
    if (!prefixes) return prefixes.status();
    host_prefixes = std::move(prefixes).value();
  }
  Result<std::unique_ptr<db::SqliteConnection>> acquired = Acquire();
  if (!acquired) return acquired.status();
  Lease c(*this, std::move(acquired).value());

  // A search's page and where its reading stopped come from one snapshot.
  if (query.Searches()) {
    if (Status s = c->Run("BEGIN"); !s.ok()) return s;
  }
  ListPage page;
  bool more = false;
  {
    Result<db::SqliteStatement> stmt = c->Prepare(ListSql(query, host_prefixes.size()));
    if (!stmt) return stmt.status();
    BindIndexedFilters(*stmt, query);
    // One row more than asked tells whether a next page exists.
    stmt->BindInt64(5, static_cast<std::int64_t>(query.limit) + 1);
    if (query.gid_prefix) stmt->BindText(7, *query.gid_prefix);
    if (query.create_time_start) stmt->BindInt64(8, ToUnixMillis(*query.create_time_start));
    if (query.create_time_end) stmt->BindInt64(9, ToUnixMillis(*query.create_time_end));
    for (std::size_t i = 0; i < host_prefixes.size(); ++i) {
      stmt->BindText(static_cast<int>(10 + i), host_prefixes[i]);
    }
    Status s = ReadAll(*stmt, [&](const db::SqliteStatement& row) {
      if (page.transactions.size() == query.limit) {
        more = true;
        return Status::Ok();
      }
      Result<GlobalRecord> global = ReadGlobal(row);
      if (!global) return global.status();
      page.transactions.push_back(std::move(global).value());
      return Status::Ok();
    });
    if (!s.ok()) return s;
  }
  if (more) {
    page.next_position = page.transactions.back().id;
  } else if (query.Searches()) {
    Result<db::SqliteStatement> stmt = c->Prepare(ScanFloorSql(query));
    if (!stmt) return stmt.status();
    BindIndexedFilters(*stmt, query);
    Result<bool> row = stmt->Step();
    if (!row) return row.status();
    if (*row && static_cast<std::size_t>(stmt->ColumnInt64(0)) == kMaxListScan) {
      page.next_position = stmt->ColumnInt64(1);
    }
  }
  if (query.Searches()) {
    if (Status s = c->Run("COMMIT"); !s.ok()) return s;
  }
  return page;
}

Result<std::vector<DueEntry>> SqliteReader::ListUnfinished() {
  Result<std::unique_ptr<db::SqliteConnection>> acquired = Acquire();
  if (!acquired) return acquired.status();
  Lease c(*this, std::move(acquired).value());

  Result<db::SqliteStatement> stmt = c->Prepare(kSelectUnfinished);
  if (!stmt) return stmt.status();
  std::vector<DueEntry> entries;
  Status s = ReadAll(*stmt, [&entries](const db::SqliteStatement& row) {
    entries.push_back(DueEntry{row.ColumnBytes(0), OptionalTime(row, 1)});
    return Status::Ok();
  });
  if (!s.ok()) return s;
  return entries;
}

Result<std::vector<UnfinishedCount>> SqliteReader::CountUnfinished() {
  Result<std::unique_ptr<db::SqliteConnection>> acquired = Acquire();
  if (!acquired) return acquired.status();
  Lease c(*this, std::move(acquired).value());

  Result<db::SqliteStatement> stmt = c->Prepare(kCountUnfinished);
  if (!stmt) return stmt.status();
  std::vector<UnfinishedCount> counts;
  Status s = ReadAll(*stmt, [&counts](const db::SqliteStatement& row) {
    const std::string trans_type = row.ColumnBytes(0);
    const std::string status = row.ColumnBytes(1);
    std::optional<TransType> type = ParseTransType(trans_type);
    std::optional<GlobalStatus> parsed_status = ParseGlobalStatus(status);
    if (!type || !parsed_status) {
      return Status::Internal("stored transactions are corrupt: trans_type '" + trans_type +
                              "', status '" + status + "'");
    }
    counts.push_back(UnfinishedCount{*type, *parsed_status,
                                     static_cast<std::size_t>(row.ColumnInt64(2)),
                                     static_cast<std::size_t>(row.ColumnInt64(3))});
    return Status::Ok();
  });
  if (!s.ok()) return s;
  return counts;
}

Result<std::vector<CreatorUsage>> SqliteReader::UnfinishedUsage(
    const std::optional<std::string>& creator) {
  Result<std::unique_ptr<db::SqliteConnection>> acquired = Acquire();
  if (!acquired) return acquired.status();
  Lease c(*this, std::move(acquired).value());

  if (creator && creator->empty()) return std::vector<CreatorUsage>{};
  Result<db::SqliteStatement> stmt = c->Prepare(creator ? kSelectUsageOf : kSelectUsage);
  if (!stmt) return stmt.status();
  if (creator) stmt->BindText(1, *creator);
  std::vector<CreatorUsage> usage;
  Status s = ReadAll(*stmt, [&usage](const db::SqliteStatement& row) {
    usage.push_back(CreatorUsage{row.ColumnBytes(0), static_cast<std::size_t>(row.ColumnInt64(1)),
                                 static_cast<std::size_t>(row.ColumnInt64(2))});
    return Status::Ok();
  });
  if (!s.ok()) return s;
  return usage;
}

Result<std::vector<std::string>> SqliteReader::ListFinishedBefore(TimePoint cutoff,
                                                                  std::size_t limit) {
  Result<std::unique_ptr<db::SqliteConnection>> acquired = Acquire();
  if (!acquired) return acquired.status();
  Lease c(*this, std::move(acquired).value());

  Result<db::SqliteStatement> stmt = c->Prepare(kSelectFinishedBefore);
  if (!stmt) return stmt.status();
  stmt->BindInt64(1, ToUnixMillis(cutoff)).BindInt64(2, static_cast<std::int64_t>(limit));
  std::vector<std::string> gids;
  Status s = ReadAll(*stmt, [&gids](const db::SqliteStatement& row) {
    gids.push_back(row.ColumnBytes(0));
    return Status::Ok();
  });
  if (!s.ok()) return s;
  return gids;
}

Result<std::vector<UndoneRollback>> SqliteReader::ListUndoneRollbacks(TimePoint finished_since,
                                                                      std::int64_t after_id,
                                                                      std::size_t limit) {
  if (limit < 1 || limit > static_cast<std::size_t>(kMaxListLimit)) {
    return Status::InvalidArgument("limit must be 1.." + std::to_string(kMaxListLimit));
  }
  Result<std::unique_ptr<db::SqliteConnection>> acquired = Acquire();
  if (!acquired) return acquired.status();
  Lease c(*this, std::move(acquired).value());

  Result<db::SqliteStatement> stmt = c->Prepare(kSelectUndoneRollbacks);
  if (!stmt) return stmt.status();
  stmt->BindInt64(1, ToUnixMillis(finished_since))
      .BindInt64(2, after_id)
      .BindInt64(3, static_cast<std::int64_t>(limit));
  std::vector<UndoneRollback> found;
  Status s = ReadAll(*stmt, [&found](const db::SqliteStatement& row) {
    found.push_back(UndoneRollback{row.ColumnInt64(0), row.ColumnBytes(1)});
    return Status::Ok();
  });
  if (!s.ok()) return s;
  return found;
}

Result<std::vector<Subscriber>> SqliteReader::Subscribers(const std::string& topic) {
  Result<std::unique_ptr<db::SqliteConnection>> acquired = Acquire();
  if (!acquired) return acquired.status();
  Lease c(*this, std::move(acquired).value());

  Result<db::SqliteStatement> stmt = c->Prepare(kSelectSubscribers);
  if (!stmt) return stmt.status();
  stmt->BindText(1, topic);
  std::vector<Subscriber> subscribers;
  Status s = ReadAll(*stmt, [&subscribers](const db::SqliteStatement& row) {
    subscribers.push_back(ReadSubscriber(row, 0));
    return Status::Ok();
  });
  if (!s.ok()) return s;
  return subscribers;
}

Result<std::vector<Topic>> SqliteReader::ListTopics() {
  Result<std::unique_ptr<db::SqliteConnection>> acquired = Acquire();
  if (!acquired) return acquired.status();
  Lease c(*this, std::move(acquired).value());

  Result<db::SqliteStatement> stmt = c->Prepare(kSelectTopics);
  if (!stmt) return stmt.status();
  std::vector<Topic> topics;
  Status s = ReadAll(*stmt, [&topics](const db::SqliteStatement& row) {
    std::string name = row.ColumnBytes(0);
    if (topics.empty() || topics.back().name != name) topics.push_back(Topic{std::move(name), {}});
    topics.back().subscribers.push_back(ReadSubscriber(row, 1));
    return Status::Ok();
  });
  if (!s.ok()) return s;
  return topics;
}

Result<AuditPage> SqliteReader::ListAudit(const AuditQuery& query) {
  if (query.limit < 1 || query.limit > kMaxListLimit) {
    return Status::InvalidArgument("limit: must be 1.." + std::to_string(kMaxListLimit) + ", got " +
                                   std::to_string(query.limit));
  }
  Result<std::unique_ptr<db::SqliteConnection>> acquired = Acquire();
  if (!acquired) return acquired.status();
  Lease c(*this, std::move(acquired).value());

  // Only the filters given, so that a transaction's entries come from the (gid, id) index.
  std::string sql =
      "SELECT id, at, actor, action, gid, target, parameters, reason FROM admin_audit WHERE 1";
  if (query.gid) sql += " AND gid = ?1 AND gid <> ''";
  if (query.actor) sql += " AND actor = ?2";
  if (query.action) sql += " AND action = ?3";
  if (query.before_id) sql += " AND id < ?4";
  sql += " ORDER BY id DESC LIMIT ?5";
  Result<db::SqliteStatement> stmt = c->Prepare(sql);
  if (!stmt) return stmt.status();
  if (query.gid) stmt->BindText(1, *query.gid);
  if (query.actor) stmt->BindText(2, *query.actor);
  if (query.action) stmt->BindText(3, *query.action);
  if (query.before_id) stmt->BindInt64(4, *query.before_id);
  stmt->BindInt64(5, static_cast<std::int64_t>(query.limit) + 1);  // one more: is there a next?

  AuditPage page;
  bool more = false;
  Status s = ReadAll(*stmt, [&](const db::SqliteStatement& row) {
    if (page.entries.size() == query.limit) {
      more = true;
      return Status::Ok();
    }
    page.entries.push_back(AuditEntry{row.ColumnInt64(0), FromUnixMillis(row.ColumnInt64(1)),
                                      row.ColumnBytes(2), row.ColumnBytes(3), row.ColumnBytes(4),
                                      row.ColumnBytes(5), row.ColumnBytes(6), row.ColumnBytes(7)});
    return Status::Ok();
  });
  if (!s.ok()) return s;
  if (more) page.next_position = page.entries.back().id;
  return page;
}

Result<std::optional<BulkJob>> SqliteReader::LoadJob(const std::string& id) {
  Result<std::unique_ptr<db::SqliteConnection>> acquired = Acquire();
  if (!acquired) return acquired.status();
  Lease c(*this, std::move(acquired).value());

  Result<db::SqliteStatement> stmt = c->Prepare(kSelectJob);
  if (!stmt) return stmt.status();
  stmt->BindText(1, id);
  Result<bool> row = stmt->Step();
  if (!row) return row.status();
  if (!*row) return std::optional<BulkJob>();
  Result<BulkJob> job = ReadJob(*stmt);
  if (!job) return job.status();
  return std::optional<BulkJob>(std::move(job).value());
}

Result<std::vector<BulkJob>> SqliteReader::ListJobs(std::size_t limit, bool running_only) {
  if (limit < 1 || limit > kMaxListLimit) {
    return Status::InvalidArgument("limit: must be 1.." + std::to_string(kMaxListLimit) + ", got " +
                                   std::to_string(limit));
  }
  Result<std::unique_ptr<db::SqliteConnection>> acquired = Acquire();
  if (!acquired) return acquired.status();
  Lease c(*this, std::move(acquired).value());

  Result<db::SqliteStatement> stmt = c->Prepare(running_only ? kSelectRunningJobs : kSelectJobs);
  if (!stmt) return stmt.status();
  stmt->BindInt64(1, static_cast<std::int64_t>(limit));
  std::vector<BulkJob> jobs;
  Status s = ReadAll(*stmt, [&jobs](const db::SqliteStatement& row) {
    Result<BulkJob> job = ReadJob(row);
    if (!job) return job.status();
    jobs.push_back(std::move(job).value());
    return Status::Ok();
  });
  if (!s.ok()) return s;
  return jobs;
}

}  // namespace settle::storage
