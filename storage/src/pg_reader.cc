#include "pg_reader.h"

#include <utility>

#include "failed_attempts_codec.h"
#include "host_url_prefixes.h"
#include "options_codec.h"
#include "shared_bodies.h"
#include "trace_codec.h"
#include "undone_rollbacks.h"

namespace settle::storage {
namespace {

constexpr std::size_t kMaxListLimit = 1000;

#define SETTLE_GLOBAL_COLUMNS                                                        \
  "g.id, g.gid, g.trans_type, g.status, g.options, g.create_time, g.update_time, "   \
  "g.finish_time, g.rollback_time, g.rollback_reason, g.next_cron_time, g.stuck, "   \
  "g.force_stopped, g.creator, g.paused_at, g.paused_by, g.paused_reason, g.trace, " \
  "g.trace_parent, g.trace_state, g.result"
constexpr int kGlobalColumns = 21;

// The global and its branch rows in one statement (one snapshot, one round trip): a global
// without branches comes back as one row whose branch columns are NULL.
constexpr std::string_view kSelectTransaction =
    "SELECT " SETTLE_GLOBAL_COLUMNS
    ", b.branch_id, b.op, b.seq, b.url, b.body, b.status, "
    "b.create_time, b.update_time, b.attempts, b.failures, b.last_error, b.next_retry_at, "
    "b.failed_attempts, b.body_of_branch, b.body_of_op "
    "FROM trans_global AS g LEFT JOIN trans_branch_op AS b ON b.global_id = g.id "
    "WHERE g.gid = $1::text ORDER BY b.seq, b.branch_id, b.op";

constexpr std::string_view kSelectUnfinished =
    "SELECT gid, next_cron_time FROM trans_global "
    "WHERE status IN ('prepared', 'submitted', 'aborting') AND paused_at IS NULL ORDER BY id";

constexpr std::string_view kCountUnfinished =
    "SELECT trans_type, status, count(*), sum(stuck) FROM trans_global "
    "WHERE status IN ('prepared', 'submitted', 'aborting') GROUP BY trans_type, status";

// A failed transaction whose cancels are still to be made waits for them.
constexpr std::string_view kSelectFinishedBefore =
    "SELECT g.gid FROM trans_global AS g WHERE g.finish_time IS NOT NULL "
    "AND g.finish_time < $1::bigint AND NOT " SETTLE_UNDONE_ROLLBACKS_OF(
        "g") " ORDER BY g.finish_time LIMIT $2::bigint";

// Served by the partial index of failed TCC and XA transactions that no operator force-stopped
// (migration 15), whose WHERE the macro repeats: never the succeeded ones.
constexpr std::string_view kSelectUndoneRollbacks =
    "SELECT g.id, g.gid FROM trans_global AS g WHERE g.status = 'failed' AND g.id > $2::bigint "
    "AND g.finish_time >= $1::bigint AND " SETTLE_UNDONE_ROLLBACKS_OF(
        "g") " ORDER BY g.id LIMIT $3::bigint";

// Topics (schema version 4): the unique (topic, url) index finds a topic's rows; seq orders
// them by subscription, and topic's "C" collation orders names byte for byte.
constexpr std::string_view kSelectSubscribers =
    "SELECT url, remark, create_time, creator FROM topic_subscriber WHERE topic = $1::text "
    "ORDER BY seq";

constexpr std::string_view kSelectTopics =
    "SELECT topic, url, remark, create_time, creator FROM topic_subscriber ORDER BY topic, seq";

// Bulk jobs (schema version 11), the latest created first: id's "C" collation breaks ties in
// byte order, as SQLite does.
#define SETTLE_JOB_COLUMNS                                                                   \
  "id, created_at, updated_at, actor, action, filter, parameters, reason, cursor, matched, " \
  "acted, skipped, last_skip, state"

constexpr std::string_view kSelectJob =
    "SELECT " SETTLE_JOB_COLUMNS " FROM bulk_jobs WHERE id = $1::text";
constexpr std::string_view kSelectJobs = "SELECT " SETTLE_JOB_COLUMNS
                                         " FROM bulk_jobs ORDER BY created_at DESC, id DESC "
                                         "LIMIT $1::bigint";
constexpr std::string_view kSelectRunningJobs =
    "SELECT " SETTLE_JOB_COLUMNS
    " FROM bulk_jobs WHERE state = 'running' ORDER BY created_at DESC, id DESC LIMIT $1::bigint";
#undef SETTLE_JOB_COLUMNS

// What each creator's unfinished transactions hold (CreatorUsage), in bytes as stored
// (schema version 6), its span (migration 12) included.
#define SETTLE_USAGE_SQL(where)                                                           \
  "SELECT g.creator, count(*), "                                                          \
  "coalesce(sum(octet_length(g.options) + octet_length(g.trace) + "                       \
  "octet_length(g.trace_parent) + octet_length(g.trace_state) + "                         \
  "coalesce((SELECT sum(octet_length(b.url) + "                                           \
  "octet_length(b.body)) FROM trans_branch_op AS b WHERE b.global_id = g.id), 0)), 0) "   \
  "FROM trans_global AS g WHERE g.status IN ('prepared', 'submitted', 'aborting') " where \
  " GROUP BY g.creator ORDER BY g.creator"

constexpr std::string_view kSelectUsage = SETTLE_USAGE_SQL("AND g.creator <> ''");
constexpr std::string_view kSelectUsageOf = SETTLE_USAGE_SQL("AND g.creator = $1::text");
#undef SETTLE_USAGE_SQL

std::optional<TimePoint> OptionalTime(const db::PgResult& rows, int row, int column) {
  std::optional<std::int64_t> ms = rows.OptionalInt(row, column);
  if (!ms) return std::nullopt;
  return FromUnixMillis(*ms);
}

Status Corrupt(const std::string& gid, std::string_view what) {
  return Status::Internal("stored transaction " + gid + " is corrupt: " + std::string(what));
}

Result<GlobalRecord> ReadGlobal(const db::PgResult& rows, int row) {
  GlobalRecord g;
  g.id = rows.Int(row, 0);
  g.gid = rows.Text(row, 1);
  const std::string trans_type = rows.Text(row, 2);
  const std::string status = rows.Text(row, 3);
  std::optional<TransType> parsed_type = ParseTransType(trans_type);
  if (!parsed_type) return Corrupt(g.gid, "unknown trans_type '" + trans_type + "'");
  std::optional<GlobalStatus> parsed_status = ParseGlobalStatus(status);
  if (!parsed_status) return Corrupt(g.gid, "unknown status '" + status + "'");
  g.trans_type = *parsed_type;
  g.status = *parsed_status;
  Result<TransOptions> options = DecodeOptions(rows.Bytes(row, 4));
  if (!options) return Corrupt(g.gid, options.status().message());
  g.options = std::move(options).value();
  g.create_time = FromUnixMillis(rows.Int(row, 5));
  g.update_time = FromUnixMillis(rows.Int(row, 6));
  g.finish_time = OptionalTime(rows, row, 7);
  g.rollback_time = OptionalTime(rows, row, 8);
  g.rollback_reason = rows.Bytes(row, 9);
  g.next_cron_time = OptionalTime(rows, row, 10);
  g.stuck = rows.Int(row, 11) != 0;
  g.force_stopped = rows.Int(row, 12) != 0;
  g.creator = rows.Text(row, 13);
  if (std::optional<TimePoint> paused_at = OptionalTime(rows, row, 14)) {
    g.paused = Pause{*paused_at, rows.Bytes(row, 15), rows.Bytes(row, 16)};
  }
  g.trace = DecodeTrace(rows.Text(row, 17), rows.Text(row, 18), rows.Text(row, 19));
  g.result = rows.Bytes(row, 20);
  return g;
}

// The branch columns of a kSelectTransaction row, which start at column `c`.
Result<BranchRecord> ReadBranch(const std::string& gid, const db::PgResult& rows, int row, int c) {
  BranchRecord b;
  b.gid = gid;
  b.branch_id = rows.Text(row, c);
  const std::string op = rows.Text(row, c + 1);
  std::optional<BranchOp> parsed_op = ParseBranchOp(op);
  if (!parsed_op) return Corrupt(gid, "branch " + b.branch_id + " has unknown op '" + op + "'");
  b.op = *parsed_op;
  b.seq = static_cast<int>(rows.Int(row, c + 2));
  b.url = rows.Text(row, c + 3);
  b.data = rows.Bytes(row, c + 4);
  const std::string status = rows.Text(row, c + 5);
  std::optional<BranchStatus> parsed_status = ParseBranchStatus(status);
  if (!parsed_status) {
    return Corrupt(gid, "branch " + b.branch_id + " has unknown status '" + status + "'");
  }
  b.status = *parsed_status;
  b.create_time = FromUnixMillis(rows.Int(row, c + 6));
  b.update_time = FromUnixMillis(rows.Int(row, c + 7));
  b.attempts = static_cast<int>(rows.Int(row, c + 8));
  b.failures = static_cast<int>(rows.Int(row, c + 9));
  b.last_error = rows.Bytes(row, c + 10);
  b.next_retry_at = FromUnixMillis(rows.Int(row, c + 11));
  Result<std::vector<FailedAttempt>> attempts = DecodeFailedAttempts(rows.Bytes(row, c + 12));
  if (!attempts) return Corrupt(gid, "branch " + b.branch_id + ": " + attempts.status().message());
  b.failed_attempts = std::move(attempts).value();
  return b;
}

// A subscriber from the row's columns `first` to `first` + 3: url, remark, create_time,
// creator.
Subscriber ReadSubscriber(const db::PgResult& rows, int row, int first) {
  return Subscriber{rows.Text(row, first), rows.Bytes(row, first + 1),
                    FromUnixMillis(rows.Int(row, first + 2)), rows.Text(row, first + 3)};
}

// A row of kSelectJob, kSelectJobs or kSelectRunningJobs.
Result<BulkJob> ReadJob(const db::PgResult& rows, int row) {
  BulkJob j;
  j.id = rows.Text(row, 0);
  j.created_at = FromUnixMillis(rows.Int(row, 1));
  j.updated_at = FromUnixMillis(rows.Int(row, 2));
  j.actor = rows.Bytes(row, 3);
  j.action = rows.Text(row, 4);
  j.filter = rows.Bytes(row, 5);
  j.parameters = rows.Bytes(row, 6);
  j.reason = rows.Bytes(row, 7);
  j.cursor = rows.Int(row, 8);
  j.matched = rows.Int(row, 9);
  j.acted = rows.Int(row, 10);
  j.skipped = rows.Int(row, 11);
  j.last_skip = rows.Bytes(row, 12);
  const std::string state = rows.Text(row, 13);
  std::optional<JobState> parsed = ParseJobState(state);
  if (!parsed) {
    return Status::Internal("stored job " + j.id + " is corrupt: unknown state '" + state + "'");
  }
  j.state = *parsed;
  return j;
}

// The WHERE clause of List's indexed filters (status, trans_type, stuck, creator, before_id) on
// rows named g; parameters are numbered from `n` + 1 in the order the filters appear.
std::string IndexedFilters(const ListQuery& q, db::PgParams& params, int& n) {
  std::string sql = " WHERE true";
  if (q.status) {
    sql += " AND g.status = $" + std::to_string(++n) + "::text";
    params.Text(ToString(*q.status));
  }
  if (q.trans_type) {
    sql += " AND g.trans_type = $" + std::to_string(++n) + "::text";
    params.Text(ToString(*q.trans_type));
  }
  if (q.stuck) sql += *q.stuck ? " AND g.stuck = 1" : " AND g.stuck = 0";
  // The parked ones: paused and unfinished (the partial index of schema version 9).
  if (q.paused) {
    sql +=
        *q.paused
            ? " AND g.paused_at IS NOT NULL AND g.status IN ('prepared', 'submitted', 'aborting')"
            : " AND g.paused_at IS NULL";
  }
  if (q.creator) {
    sql += " AND g.creator IN ($" + std::to_string(++n) + "::text, '')";
    params.Text(*q.creator);
  }
  if (q.before_id) {
    sql += " AND g.id < $" + std::to_string(++n) + "::bigint";
    params.Int(*q.before_id);
  }
  return sql;
}

// The search filters (ListQuery::Searches) on rows named g, `host_prefixes` those of
// HostUrlPrefixes.
std::string SearchFilters(const ListQuery& q, const std::vector<std::string>& host_prefixes,
                          db::PgParams& params, int& n) {
  std::string sql = " WHERE true";
  if (q.gid_prefix) {
    const std::string p = "$" + std::to_string(++n) + "::text";
    sql += " AND substr(g.gid, 1, length(" + p + ")) = " + p;
    params.Text(*q.gid_prefix);
  }
  if (q.create_time_start) {
    sql += " AND g.create_time >= $" + std::to_string(++n) + "::bigint";
    params.Int(ToUnixMillis(*q.create_time_start));
  }
  if (q.create_time_end) {
    sql += " AND g.create_time <= $" + std::to_string(++n) + "::bigint";
    params.Int(ToUnixMillis(*q.create_time_end));
  }
  if (q.host) {
    // Only an unfinished transaction still calls its branches.
    sql += " AND g.status IN ('prepared', 'submitted', 'aborting')";
    sql +=
        " AND EXISTS (SELECT 1 FROM trans_branch_op AS b WHERE b.global_id = g.id AND b.status = '";
    sql += ToString(BranchStatus::kPrepared);
    sql += "' AND (";
    for (std::size_t i = 0; i < host_prefixes.size(); ++i) {
      const std::string p = "$" + std::to_string(++n) + "::text";
      sql += (i ? " OR " : "");
      sql += "(substr(lower(b.url), 1, length(" + p + ")) = " + p + " AND substr(b.url, length(" +
             p + ") + 1, 1) IN ('', '/', '?'))";
      params.Text(host_prefixes[i]);
    }
    sql += "))";
  }
  return sql;
}

// The List statement for the filters present; each shape is its own prepared statement.
// A search reads the newest kMaxListScan rows the indexed filters let through (w) and keeps
// those the search filters let through; each row also carries how many rows it read and the
// lowest id among them, from the same snapshot, and one row of those alone (the transaction's
// columns null) comes back when it kept none.
std::string ListSql(const ListQuery& q, const std::vector<std::string>& host_prefixes,
                    db::PgParams& params) {
  int n = 0;
  std::string sql;
  if (!q.Searches()) {
    sql = "SELECT " SETTLE_GLOBAL_COLUMNS " FROM trans_global AS g" + IndexedFilters(q, params, n);
    // One row more than asked tells whether a next page exists.
    sql += " ORDER BY g.id DESC LIMIT $" + std::to_string(++n) + "::bigint";
    params.Int(static_cast<std::int64_t>(q.limit) + 1);
    return sql;
  }
  sql =
      "WITH w AS (SELECT * FROM trans_global AS g" + IndexedFilters(q, params, n) +
      " ORDER BY g.id DESC LIMIT " + std::to_string(kMaxListScan) +
      "), f AS (SELECT count(*) AS scanned, min(id) AS floor FROM w) SELECT " SETTLE_GLOBAL_COLUMNS
      ", f.scanned, f.floor FROM f LEFT JOIN LATERAL (SELECT * FROM w AS g" +
      SearchFilters(q, host_prefixes, params, n);
  sql += " ORDER BY g.id DESC LIMIT $" + std::to_string(++n) + "::bigint) AS g ON true";
  params.Int(static_cast<std::int64_t>(q.limit) + 1);
  return sql + " ORDER BY g.id DESC";
}

}  // namespace

Result<std::optional<Transaction>> PgReader::Load(const std::string& gid) {
  Result<std::unique_ptr<db::PgPool::Lease>> c = pool_.Acquire();
  if (!c) return c.status();
  Result<db::PgResult> rows = (**c)->Query(kSelectTransaction, db::PgParams().Text(gid));
  if (!rows) return rows.status();
  if (rows->rows() == 0) return std::optional<Transaction>();
  Transaction t;
  Result<GlobalRecord> global = ReadGlobal(*rows, 0);
  if (!global) return global.status();
  t.global = std::move(global).value();
  std::vector<std::optional<BodyHolder>> holders;
  for (int row = 0; row < rows->rows(); ++row) {
    if (rows->IsNull(row, kGlobalColumns)) continue;  // no branch rows
    Result<BranchRecord> branch = ReadBranch(t.global.gid, *rows, row, kGlobalColumns);
    if (!branch) return branch.status();
    t.branches.push_back(std::move(branch).value());
    holders.push_back(StoredBodyHolder(rows->Text(row, kGlobalColumns + 13),
                                       rows->Text(row, kGlobalColumns + 14)));
  }
  if (Status s = ShareBodies(t.global.gid, t.branches, holders); !s.ok()) return s;
  return std::optional<Transaction>(std::move(t));
}

Result<ListPage> PgReader::List(const ListQuery& query) {
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
  Result<std::unique_ptr<db::PgPool::Lease>> c = pool_.Acquire();
  if (!c) return c.status();
  db::PgParams params;
  const std::string sql = ListSql(query, host_prefixes, params);
  Result<db::PgResult> rows = (**c)->Query(sql, params);
  if (!rows) return rows.status();
  ListPage page;
  const int shown = std::min(rows->rows(), static_cast<int>(query.limit));
  for (int row = 0; row < shown; ++row) {
    if (rows->IsNull(row, 0)) continue;  // the lone row of a search that kept nothing
    Result<GlobalRecord> global = ReadGlobal(*rows, row);
    if (!global) return global.status();
    page.transactions.push_back(std::move(global).value());
  }
  if (query.Searches()) {
    if (rows->rows() > shown) {
      page.next_position = page.transactions.back().id;
    } else if (rows->rows() > 0 &&
               static_cast<std::size_t>(rows->Int(0, kGlobalColumns)) == kMaxListScan) {
      page.next_position = rows->Int(0, kGlobalColumns + 1);
    }
    return page;
  }
  if (rows->rows() > shown) page.next_position = page.transactions.back().id;
  return page;
}

Result<AuditPage> PgReader::ListAudit(const AuditQuery& query) {
  if (query.limit < 1 || query.limit > kMaxListLimit) {
    return Status::InvalidArgument("limit: must be 1.." + std::to_string(kMaxListLimit) + ", got " +
                                   std::to_string(query.limit));
  }
  Result<std::unique_ptr<db::PgPool::Lease>> c = pool_.Acquire();
  if (!c) return c.status();
  // Only the filters given, so that a transaction's entries come from the (gid, id) index.
  std::string sql =
      "SELECT id, at, actor, action, gid, target, parameters, reason FROM admin_audit WHERE true";
  db::PgParams params;
  int n = 0;
  if (query.gid) {
    sql += " AND gid = $" + std::to_string(++n) + "::text AND gid <> ''";
    params.Text(*query.gid);
  }
  if (query.actor) {
    sql += " AND actor = $" + std::to_string(++n) + "::bytea";
    params.Bytes(*query.actor);
  }
  if (query.action) {
    sql += " AND action = $" + std::to_string(++n) + "::text";
    params.Text(*query.action);
  }
  if (query.before_id) {
    sql += " AND id < $" + std::to_string(++n) + "::bigint";
    params.Int(*query.before_id);
  }
  sql += " ORDER BY id DESC LIMIT $" + std::to_string(++n) + "::bigint";
  params.Int(static_cast<std::int64_t>(query.limit) + 1);  // one more: is there a next page?
  Result<db::PgResult> rows = (**c)->Query(sql, params);
  if (!rows) return rows.status();
  AuditPage page;
  const int shown = std::min(rows->rows(), static_cast<int>(query.limit));
  for (int row = 0; row < shown; ++row) {
    page.entries.push_back(AuditEntry{rows->Int(row, 0), FromUnixMillis(rows->Int(row, 1)),
                                      rows->Bytes(row, 2), rows->Text(row, 3), rows->Text(row, 4),
                                      rows->Bytes(row, 5), rows->Bytes(row, 6),
                                      rows->Bytes(row, 7)});
  }
  if (rows->rows() > shown) page.next_position = page.entries.back().id;
  return page;
}

Result<std::vector<DueEntry>> PgReader::ListUnfinished() {
  Result<std::unique_ptr<db::PgPool::Lease>> c = pool_.Acquire();
  if (!c) return c.status();
  Result<db::PgResult> rows = (**c)->Query(kSelectUnfinished);
  if (!rows) return rows.status();
  std::vector<DueEntry> entries;
  entries.reserve(static_cast<std::size_t>(rows->rows()));
  for (int row = 0; row < rows->rows(); ++row) {
    entries.push_back(DueEntry{rows->Text(row, 0), OptionalTime(*rows, row, 1)});
  }
  return entries;
}

Result<std::vector<UnfinishedCount>> PgReader::CountUnfinished() {
  Result<std::unique_ptr<db::PgPool::Lease>> c = pool_.Acquire();
  if (!c) return c.status();
  Result<db::PgResult> rows = (**c)->Query(kCountUnfinished);
  if (!rows) return rows.status();
  std::vector<UnfinishedCount> counts;
  for (int row = 0; row < rows->rows(); ++row) {
    const std::string trans_type = rows->Text(row, 0);
    const std::string status = rows->Text(row, 1);
    std::optional<TransType> type = ParseTransType(trans_type);
    std::optional<GlobalStatus> parsed_status = ParseGlobalStatus(status);
    if (!type || !parsed_status) {
      return Status::Internal("stored transactions are corrupt: trans_type '" + trans_type +
                              "', status '" + status + "'");
    }
    counts.push_back(UnfinishedCount{*type, *parsed_status,
                                     static_cast<std::size_t>(rows->Int(row, 2)),
                                     static_cast<std::size_t>(rows->Int(row, 3))});
  }
  return counts;
}

Result<std::vector<CreatorUsage>> PgReader::UnfinishedUsage(
    const std::optional<std::string>& creator) {
  if (creator && creator->empty()) return std::vector<CreatorUsage>{};
  Result<std::unique_ptr<db::PgPool::Lease>> c = pool_.Acquire();
  if (!c) return c.status();
  Result<db::PgResult> rows = creator ? (**c)->Query(kSelectUsageOf, db::PgParams().Text(*creator))
                                      : (**c)->Query(kSelectUsage);
  if (!rows) return rows.status();
  std::vector<CreatorUsage> usage;
  for (int row = 0; row < rows->rows(); ++row) {
    usage.push_back(CreatorUsage{rows->Text(row, 0), static_cast<std::size_t>(rows->Int(row, 1)),
                                 static_cast<std::size_t>(rows->Int(row, 2))});
  }
  return usage;
}

Result<std::vector<std::string>> PgReader::ListFinishedBefore(TimePoint cutoff, std::size_t limit) {
  Result<std::unique_ptr<db::PgPool::Lease>> c = pool_.Acquire();
  if (!c) return c.status();
  Result<db::PgResult> rows =
      (**c)->Query(kSelectFinishedBefore,
                   db::PgParams().Int(ToUnixMillis(cutoff)).Int(static_cast<std::int64_t>(limit)));
  if (!rows) return rows.status();
  std::vector<std::string> gids;
  for (int row = 0; row < rows->rows(); ++row) gids.push_back(rows->Text(row, 0));
  return gids;
}

Result<std::vector<UndoneRollback>> PgReader::ListUndoneRollbacks(TimePoint finished_since,
                                                                  std::int64_t after_id,
                                                                  std::size_t limit) {
  if (limit < 1 || limit > kMaxListLimit) {
    return Status::InvalidArgument("limit must be 1.." + std::to_string(kMaxListLimit));
  }
  Result<std::unique_ptr<db::PgPool::Lease>> c = pool_.Acquire();
  if (!c) return c.status();
  Result<db::PgResult> rows =
      (**c)->Query(kSelectUndoneRollbacks, db::PgParams()
                                               .Int(ToUnixMillis(finished_since))
                                               .Int(after_id)
                                               .Int(static_cast<std::int64_t>(limit)));
  if (!rows) return rows.status();
  std::vector<UndoneRollback> found;
  for (int row = 0; row < rows->rows(); ++row) {
    found.push_back(UndoneRollback{rows->Int(row, 0), rows->Text(row, 1)});
  }
  return found;
}

Result<std::vector<Subscriber>> PgReader::Subscribers(const std::string& topic) {
  Result<std::unique_ptr<db::PgPool::Lease>> c = pool_.Acquire();
  if (!c) return c.status();
  Result<db::PgResult> rows = (**c)->Query(kSelectSubscribers, db::PgParams().Text(topic));
  if (!rows) return rows.status();
  std::vector<Subscriber> subscribers;
  subscribers.reserve(static_cast<std::size_t>(rows->rows()));
  for (int row = 0; row < rows->rows(); ++row) {
    subscribers.push_back(ReadSubscriber(*rows, row, 0));
  }
  return subscribers;
}

Result<std::vector<Topic>> PgReader::ListTopics() {
  Result<std::unique_ptr<db::PgPool::Lease>> c = pool_.Acquire();
  if (!c) return c.status();
  Result<db::PgResult> rows = (**c)->Query(kSelectTopics);
  if (!rows) return rows.status();
  std::vector<Topic> topics;
  for (int row = 0; row < rows->rows(); ++row) {
    std::string name = rows->Text(row, 0);
    if (topics.empty() || topics.back().name != name) topics.push_back(Topic{std::move(name), {}});
    topics.back().subscribers.push_back(ReadSubscriber(*rows, row, 1));
  }
  return topics;
}

Result<std::optional<BulkJob>> PgReader::LoadJob(const std::string& id) {
  Result<std::unique_ptr<db::PgPool::Lease>> c = pool_.Acquire();
  if (!c) return c.status();
  Result<db::PgResult> rows = (**c)->Query(kSelectJob, db::PgParams().Text(id));
  if (!rows) return rows.status();
  if (rows->rows() == 0) return std::optional<BulkJob>();
  Result<BulkJob> job = ReadJob(*rows, 0);
  if (!job) return job.status();
  return std::optional<BulkJob>(std::move(job).value());
}

Result<std::vector<BulkJob>> PgReader::ListJobs(std::size_t limit, bool running_only) {
  if (limit < 1 || limit > kMaxListLimit) {
    return Status::InvalidArgument("limit: must be 1.." + std::to_string(kMaxListLimit) + ", got " +
                                   std::to_string(limit));
  }
  Result<std::unique_ptr<db::PgPool::Lease>> c = pool_.Acquire();
  if (!c) return c.status();
  Result<db::PgResult> rows = (**c)->Query(running_only ? kSelectRunningJobs : kSelectJobs,
                                           db::PgParams().Int(static_cast<std::int64_t>(limit)));
  if (!rows) return rows.status();
  std::vector<BulkJob> jobs;
  jobs.reserve(static_cast<std::size_t>(rows->rows()));
  for (int row = 0; row < rows->rows(); ++row) {
    Result<BulkJob> job = ReadJob(*rows, row);
    if (!job) return job.status();
    jobs.push_back(std::move(job).value());
  }
  return jobs;
}

}  // namespace settle::storage
