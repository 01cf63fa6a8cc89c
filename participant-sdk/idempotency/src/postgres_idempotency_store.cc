#include "settle/sdk/postgres_idempotency_store.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string_view>
#include <utility>

#include "settle/db/pg_connection.h"

namespace settle::sdk {
namespace {

// Times are unix milliseconds; state is 'in_progress' or 'done'.
constexpr const char* kCreateSchemaSql = R"sql(
SELECT pg_advisory_xact_lock(hashtext('settle idempotency_key schema'));
CREATE TABLE IF NOT EXISTS idempotency_key (
  key          TEXT    NOT NULL PRIMARY KEY,
  fingerprint  TEXT    NOT NULL,
  state        TEXT    NOT NULL,
  owner        TEXT    NOT NULL,
  lease_until  BIGINT  NOT NULL,
  status       INTEGER NOT NULL,
  content_type TEXT    NOT NULL,
  body         BYTEA   NOT NULL,
  create_time  BIGINT  NOT NULL,
  expires      BIGINT  NOT NULL
);
CREATE INDEX IF NOT EXISTS idempotency_key_expires ON idempotency_key(expires);
CREATE TABLE IF NOT EXISTS idempotency_token (
  token   TEXT   NOT NULL PRIMARY KEY,
  caller  TEXT   NOT NULL,
  expires BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS idempotency_token_expires ON idempotency_token(expires);
)sql";

constexpr std::string_view kLockKeySql =
    "SELECT pg_advisory_xact_lock(hashtextextended(current_schema() || ' idempotency_key ' || $1, "
    "0))";

constexpr std::string_view kSelectSql =
    "SELECT key, fingerprint, state, owner, lease_until, status, content_type, body, "
    "create_time, expires FROM idempotency_key WHERE key = $1";

constexpr std::string_view kPutSql =
    "INSERT INTO idempotency_key(key, fingerprint, state, owner, lease_until, status, "
    "content_type, body, create_time, expires) "
    "VALUES ($1, $2, $3, $4, $5::bigint, $6::integer, $7, $8::bytea, $9::bigint, $10::bigint) "
    "ON CONFLICT (key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, "
    "state = EXCLUDED.state, owner = EXCLUDED.owner, lease_until = EXCLUDED.lease_until, "
    "status = EXCLUDED.status, content_type = EXCLUDED.content_type, body = EXCLUDED.body, "
    "create_time = EXCLUDED.create_time, expires = EXCLUDED.expires";

constexpr std::string_view kDeleteClaimSql =
    "DELETE FROM idempotency_key WHERE key = $1 AND owner = $2 AND state = 'in_progress'";

constexpr std::string_view kDeleteExpiredSql =
    "DELETE FROM idempotency_key WHERE ctid IN "
    "(SELECT ctid FROM idempotency_key WHERE expires < $1::bigint LIMIT $2::bigint)";

constexpr std::string_view kPutTokenSql =
    "INSERT INTO idempotency_token(token, caller, expires) VALUES ($1, $2, $3::bigint)";

constexpr std::string_view kSelectTokenSql =
    "SELECT token, caller, expires FROM idempotency_token WHERE token = $1";

constexpr std::string_view kDeleteTokenSql = "DELETE FROM idempotency_token WHERE token = $1";

constexpr std::string_view kDeleteExpiredTokensSql =
    "DELETE FROM idempotency_token WHERE ctid IN "
    "(SELECT ctid FROM idempotency_token WHERE expires < $1::bigint LIMIT $2::bigint)";

Result<db::PgConnection*> Own(BarrierTransaction& tx) {
  db::PgConnection* connection = PostgresBarrierStore::Connection(tx);
  if (connection == nullptr) {
    return Status::InvalidArgument("idempotency store: a transaction of another store");
  }
  return connection;
}

Result<std::optional<IdempotencyRecord>> Select(db::PgConnection& connection,
                                                const std::string& key) {
  Result<db::PgResult> rows = connection.Query(kSelectSql, db::PgParams().Text(key));
  if (!rows) return rows.status();
  if (rows->rows() == 0) return std::optional<IdempotencyRecord>();
  IdempotencyRecord record;
  record.key = rows->Text(0, 0);
  record.fingerprint = rows->Text(0, 1);
  record.state = rows->Text(0, 2) == "done" ? IdempotencyRecord::State::kDone
                                            : IdempotencyRecord::State::kInProgress;
  record.owner = rows->Text(0, 3);
  record.lease_until = FromUnixMillis(rows->Int(0, 4));
  record.status = static_cast<int>(rows->Int(0, 5));
  record.content_type = rows->Text(0, 6);
  record.body = rows->Bytes(0, 7);
  record.create_time = FromUnixMillis(rows->Int(0, 8));
  record.expires = FromUnixMillis(rows->Int(0, 9));
  return std::optional<IdempotencyRecord>(std::move(record));
}

}  // namespace

Result<std::unique_ptr<PostgresIdempotencyStore>> PostgresIdempotencyStore::Open(
    PostgresBarrierStore& barrier) {
  Result<std::unique_ptr<BarrierTransaction>> tx = barrier.Begin();
  if (!tx) return tx.status();
  Result<db::PgConnection*> connection = Own(**tx);
  if (!connection) return connection.status();
  Status s = (*connection)->Run(kCreateSchemaSql);
  if (s.ok()) s = (*tx)->Commit();
  if (!s.ok()) return Status(s.code(), "idempotency store: creating the table: " + s.message());
  return std::unique_ptr<PostgresIdempotencyStore>(new PostgresIdempotencyStore(barrier));
}

Result<std::unique_ptr<BarrierTransaction>> PostgresIdempotencyStore::Begin() {
  return barrier_.Begin();
}

Result<std::optional<IdempotencyRecord>> PostgresIdempotencyStore::Peek(const std::string& key) {
  Result<std::unique_ptr<BarrierTransaction>> tx = barrier_.Begin();
  if (!tx) return tx.status();
  Result<db::PgConnection*> connection = Own(**tx);
  if (!connection) return connection.status();
  return Select(**connection, key);  // the transaction rolls back as it goes
}

Result<std::optional<IdempotencyRecord>> PostgresIdempotencyStore::Find(BarrierTransaction& tx,
                                                                        const std::string& key) {
  Result<db::PgConnection*> connection = Own(tx);
  if (!connection) return connection.status();
  Result<db::PgResult> locked = (*connection)->Query(kLockKeySql, db::PgParams().Text(key));
  if (!locked) return locked.status();
  return Select(**connection, key);
}

Status PostgresIdempotencyStore::Put(BarrierTransaction& tx, const IdempotencyRecord& record) {
  Result<db::PgConnection*> connection = Own(tx);
  if (!connection) return connection.status();
  const bool done = record.state == IdempotencyRecord::State::kDone;
  Result<db::PgResult> put = (*connection)
                                 ->Query(kPutSql, db::PgParams()
                                                      .Text(record.key)
                                                      .Text(record.fingerprint)
                                                      .Text(done ? "done" : "in_progress")
                                                      .Text(record.owner)
                                                      .Int(ToUnixMillis(record.lease_until))
                                                      .Int(record.status)
                                                      .Text(record.content_type)
                                                      .Bytes(record.body)
                                                      .Int(ToUnixMillis(record.create_time))
                                                      .Int(ToUnixMillis(record.expires)));
  return put ? Status::Ok() : put.status();
}

Result<bool> PostgresIdempotencyStore::DeleteClaim(BarrierTransaction& tx, const std::string& key,
                                                   const std::string& owner) {
  Result<db::PgConnection*> connection = Own(tx);
  if (!connection) return connection.status();
  Result<db::PgResult> deleted =
      (*connection)->Query(kDeleteClaimSql, db::PgParams().Text(key).Text(owner));
  if (!deleted) return deleted.status();
  return deleted->affected() > 0;
}

Status PostgresIdempotencyStore::PutToken(BarrierTransaction& tx, const IssuedToken& token) {
  Result<db::PgConnection*> connection = Own(tx);
  if (!connection) return connection.status();
  Result<db::PgResult> put =
      (*connection)
          ->Query(
              kPutTokenSql,
              db::PgParams().Text(token.token).Text(token.caller).Int(ToUnixMillis(token.expires)));
  return put ? Status::Ok() : put.status();
}

Result<std::optional<IssuedToken>> PostgresIdempotencyStore::FindToken(BarrierTransaction& tx,
                                                                       const std::string& token) {
  Result<db::PgConnection*> connection = Own(tx);
  if (!connection) return connection.status();
  Result<db::PgResult> rows = (*connection)->Query(kSelectTokenSql, db::PgParams().Text(token));
  if (!rows) return rows.status();
  if (rows->rows() == 0) return std::optional<IssuedToken>();
  return std::optional<IssuedToken>(
      IssuedToken{rows->Text(0, 0), rows->Text(0, 1), FromUnixMillis(rows->Int(0, 2))});
}

Result<bool> PostgresIdempotencyStore::DeleteToken(BarrierTransaction& tx,
                                                   const std::string& token) {
  Result<db::PgConnection*> connection = Own(tx);
  if (!connection) return connection.status();
  Result<db::PgResult> deleted = (*connection)->Query(kDeleteTokenSql, db::PgParams().Text(token));
  if (!deleted) return deleted.status();
  return deleted->affected() > 0;
}

Result<std::size_t> PostgresIdempotencyStore::DeleteExpired(TimePoint now, std::size_t limit) {
  Result<std::unique_ptr<BarrierTransaction>> tx = barrier_.Begin();
  if (!tx) return tx.status();
  Result<db::PgConnection*> connection = Own(**tx);
  if (!connection) return connection.status();
  const auto max = static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max());
  std::size_t deleted = 0;
  // Keys first, then tokens, at most `limit` rows in all.
  for (std::string_view sql : {kDeleteExpiredSql, kDeleteExpiredTokensSql}) {
    if (deleted == limit) break;
    Result<db::PgResult> done =
        (*connection)
            ->Query(sql, db::PgParams()
                             .Int(ToUnixMillis(now))
                             .Int(static_cast<std::int64_t>(std::min(limit - deleted, max))));
    if (!done) return done.status();
    deleted += static_cast<std::size_t>(done->affected());
  }
  if (Status s = (*tx)->Commit(); !s.ok()) return s;
  return deleted;
}

}  // namespace settle::sdk
