#include "settle/sdk/sqlite_idempotency_store.h"

#include <cstdint>
#include <mutex>
#include <string_view>
#include <utility>

#include "settle/db/sqlite_connection.h"
#include "settle/sdk/sqlite_barrier_transaction.h"

namespace settle::sdk {
namespace {

// Times are unix milliseconds; state is 'in_progress' or 'done'. The table shares the file
// with the barrier and the participant's own tables, and like the barrier leaves
// user_version alone.
constexpr const char* kCreateSchemaSql = R"sql(
CREATE TABLE IF NOT EXISTS idempotency_key (
  key          TEXT    NOT NULL PRIMARY KEY,
  fingerprint  TEXT    NOT NULL,
  state        TEXT    NOT NULL,
  owner        TEXT    NOT NULL,
  lease_until  INTEGER NOT NULL,
  status       INTEGER NOT NULL,
  content_type TEXT    NOT NULL,
  body         BLOB    NOT NULL,
  create_time  INTEGER NOT NULL,
  expires      INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS idempotency_key_expires ON idempotency_key(expires);
CREATE TABLE IF NOT EXISTS idempotency_token (
  token   TEXT    NOT NULL PRIMARY KEY,
  caller  TEXT    NOT NULL,
  expires INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS idempotency_token_expires ON idempotency_token(expires);
)sql";

constexpr std::string_view kSelectSql =
    "SELECT key, fingerprint, state, owner, lease_until, status, content_type, body, "
    "create_time, expires FROM idempotency_key WHERE key = ?1";

constexpr std::string_view kPutSql =
    "INSERT OR REPLACE INTO idempotency_key(key, fingerprint, state, owner, lease_until, "
    "status, content_type, body, create_time, expires) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)";

constexpr std::string_view kDeleteClaimSql =
    "DELETE FROM idempotency_key WHERE key = ?1 AND owner = ?2 AND state = 'in_progress'";

constexpr std::string_view kDeleteExpiredSql =
    "DELETE FROM idempotency_key WHERE rowid IN "
    "(SELECT rowid FROM idempotency_key WHERE expires < ?1 LIMIT ?2)";

constexpr std::string_view kPutTokenSql =
    "INSERT INTO idempotency_token(token, caller, expires) VALUES (?1, ?2, ?3)";

constexpr std::string_view kSelectTokenSql =
    "SELECT token, caller, expires FROM idempotency_token WHERE token = ?1";

constexpr std::string_view kDeleteTokenSql = "DELETE FROM idempotency_token WHERE token = ?1";

constexpr std::string_view kDeleteExpiredTokensSql =
    "DELETE FROM idempotency_token WHERE rowid IN "
    "(SELECT rowid FROM idempotency_token WHERE expires < ?1 LIMIT ?2)";

constexpr std::string_view kInProgress = "in_progress";
constexpr std::string_view kDone = "done";

Result<std::optional<IdempotencyRecord>> Select(db::SqliteConnection& connection,
                                                const std::string& key) {
  Result<db::SqliteStatement> select = connection.Prepare(kSelectSql);
  if (!select) return select.status();
  Result<bool> row = select->BindText(1, key).Step();
  if (!row) return row.status();
  if (!*row) return std::optional<IdempotencyRecord>();
  IdempotencyRecord record;
  record.key = select->ColumnBytes(0);
  record.fingerprint = select->ColumnBytes(1);
  record.state = select->ColumnBytes(2) == kDone ? IdempotencyRecord::State::kDone
                                                 : IdempotencyRecord::State::kInProgress;
  record.owner = select->ColumnBytes(3);
  record.lease_until = FromUnixMillis(select->ColumnInt64(4));
  record.status = static_cast<int>(select->ColumnInt64(5));
  record.content_type = select->ColumnBytes(6);
  record.body = select->ColumnBytes(7);
  record.create_time = FromUnixMillis(select->ColumnInt64(8));
  record.expires = FromUnixMillis(select->ColumnInt64(9));
  return std::optional<IdempotencyRecord>(std::move(record));
}

Result<db::SqliteConnection*> Own(BarrierTransaction& tx) {
  auto* own = dynamic_cast<SqliteBarrierTransaction*>(&tx);
  if (own == nullptr) {
    return Status::InvalidArgument("idempotency store: a transaction of another store");
  }
  if (!own->connection().InTransaction()) {
    return Status::Unavailable("idempotency store: the transaction has ended");
  }
  return &own->connection();
}

}  // namespace

class SqliteIdempotencyStore::Impl {
 public:
  SqliteBarrierStore* barrier = nullptr;
  std::mutex peek_mu;  // guards `peek`, which one thread uses at a time
  std::unique_ptr<db::SqliteConnection> peek;
};

Result<std::unique_ptr<SqliteIdempotencyStore>> SqliteIdempotencyStore::Open(
    const std::string& path, SqliteBarrierStore& barrier) {
  // DDL inside a barrier transaction: the write lock keeps two processes from racing.
  Result<std::unique_ptr<BarrierTransaction>> tx = barrier.Begin();
  if (!tx) return tx.status();
  Result<db::SqliteConnection*> connection = Own(**tx);
  if (!connection) return connection.status();
  Status s = (*connection)->Exec(kCreateSchemaSql);
  if (s.ok()) s = (*tx)->Commit();
  if (!s.ok()) return Status(s.code(), "idempotency store: creating the table: " + s.message());

  auto impl = std::make_unique<Impl>();
  impl->barrier = &barrier;
  Result<std::unique_ptr<db::SqliteConnection>> peek =
      db::SqliteConnection::Open(path, SQLITE_OPEN_READWRITE, 10'000);
  if (!peek) return peek.status();
  impl->peek = std::move(*peek);
  return std::unique_ptr<SqliteIdempotencyStore>(new SqliteIdempotencyStore(std::move(impl)));
}

SqliteIdempotencyStore::SqliteIdempotencyStore(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}

SqliteIdempotencyStore::~SqliteIdempotencyStore() = default;

Result<std::unique_ptr<BarrierTransaction>> SqliteIdempotencyStore::Begin() {
  return impl_->barrier->Begin();
}

Result<std::optional<IdempotencyRecord>> SqliteIdempotencyStore::Peek(const std::string& key) {
  std::lock_guard lock(impl_->peek_mu);
  return Select(*impl_->peek, key);
}

Result<std::optional<IdempotencyRecord>> SqliteIdempotencyStore::Find(BarrierTransaction& tx,
                                                                      const std::string& key) {
  Result<db::SqliteConnection*> connection = Own(tx);
  if (!connection) return connection.status();
  return Select(**connection, key);
}

Status SqliteIdempotencyStore::Put(BarrierTransaction& tx, const IdempotencyRecord& record) {
  Result<db::SqliteConnection*> connection = Own(tx);
  if (!connection) return connection.status();
  Result<db::SqliteStatement> put = (*connection)->Prepare(kPutSql);
  if (!put) return put.status();
  const bool done = record.state == IdempotencyRecord::State::kDone;
  return put->BindText(1, record.key)
      .BindText(2, record.fingerprint)
      .BindText(3, done ? kDone : kInProgress)
      .BindText(4, record.owner)
      .BindInt64(5, ToUnixMillis(record.lease_until))
      .BindInt64(6, record.status)
      .BindText(7, record.content_type)
      .BindBlob(8, record.body)
      .BindInt64(9, ToUnixMillis(record.create_time))
      .BindInt64(10, ToUnixMillis(record.expires))
      .Run();
}

Result<bool> SqliteIdempotencyStore::DeleteClaim(BarrierTransaction& tx, const std::string& key,
                                                 const std::string& owner) {
  Result<db::SqliteConnection*> connection = Own(tx);
  if (!connection) return connection.status();
  Result<db::SqliteStatement> del = (*connection)->Prepare(kDeleteClaimSql);
  if (!del) return del.status();
  Status s = del->BindText(1, key).BindText(2, owner).Run();
  if (!s.ok()) return s;
  return (*connection)->Changes() > 0;
}

Status SqliteIdempotencyStore::PutToken(BarrierTransaction& tx, const IssuedToken& token) {
  Result<db::SqliteConnection*> connection = Own(tx);
  if (!connection) return connection.status();
  Result<db::SqliteStatement> put = (*connection)->Prepare(kPutTokenSql);
  if (!put) return put.status();
  return put->BindText(1, token.token)
      .BindText(2, token.caller)
      .BindInt64(3, ToUnixMillis(token.expires))
      .Run();
}

Result<std::optional<IssuedToken>> SqliteIdempotencyStore::FindToken(BarrierTransaction& tx,
                                                                     const std::string& token) {
  Result<db::SqliteConnection*> connection = Own(tx);
  if (!connection) return connection.status();
  Result<db::SqliteStatement> select = (*connection)->Prepare(kSelectTokenSql);
  if (!select) return select.status();
  Result<bool> row = select->BindText(1, token).Step();
  if (!row) return row.status();
  if (!*row) return std::optional<IssuedToken>();
  return std::optional<IssuedToken>(IssuedToken{select->ColumnBytes(0), select->ColumnBytes(1),
                                                FromUnixMillis(select->ColumnInt64(2))});
}

Result<bool> SqliteIdempotencyStore::DeleteToken(BarrierTransaction& tx, const std::string& token) {
  Result<db::SqliteConnection*> connection = Own(tx);
  if (!connection) return connection.status();
  Result<db::SqliteStatement> del = (*connection)->Prepare(kDeleteTokenSql);
  if (!del) return del.status();
  if (Status s = del->BindText(1, token).Run(); !s.ok()) return s;
  return (*connection)->Changes() > 0;
}

Result<std::size_t> SqliteIdempotencyStore::DeleteExpired(TimePoint now, std::size_t limit) {
  Result<std::unique_ptr<BarrierTransaction>> tx = Begin();
  if (!tx) return tx.status();
  Result<db::SqliteConnection*> connection = Own(**tx);
  if (!connection) return connection.status();
  std::size_t deleted = 0;
  // Keys first, then tokens, at most `limit` rows in all.
  for (std::string_view sql : {kDeleteExpiredSql, kDeleteExpiredTokensSql}) {
    if (deleted == limit) break;
    Result<db::SqliteStatement> del = (*connection)->Prepare(sql);
    if (!del) return del.status();
    Status s = del->BindInt64(1, ToUnixMillis(now))
                   .BindInt64(2, static_cast<std::int64_t>(limit - deleted))
                   .Run();
    if (!s.ok()) return s;
    deleted += static_cast<std::size_t>((*connection)->Changes());
  }
  if (Status s = (*tx)->Commit(); !s.ok()) return s;
  return deleted;
}

}  // namespace settle::sdk
