#pragma once

#include <string_view>

namespace settle::sdk {

// The `barrier` table of docs/protocol.md §6.3 in the participant's PostgreSQL database, and the
// statements on it, shared by PostgresBarrierStore and PostgresXa (whose branches leave their
// mark in it): public for PostgresXa, in the xa room, not for business code. create_time is in
// unix milliseconds.

// Creates the table and its create_time index if they are missing, under an advisory lock so
// that several participant processes may start together. Run with PgConnection::Run. The index
// is looked up first: CREATE INDEX IF NOT EXISTS takes its lock on the table before it checks,
// and would wait for every prepared XA branch (each holds a row of the table) to end, which
// for a participant restarted after a crash means forever: phase 2 needs it running.
inline constexpr const char* kCreatePostgresBarrierSchemaSql = R"sql(
BEGIN;
SELECT pg_advisory_xact_lock(74372855, hashtext(current_schema()));
CREATE TABLE IF NOT EXISTS barrier (
  trans_type  TEXT   NOT NULL,
  gid         TEXT   NOT NULL,
  branch_id   TEXT   NOT NULL,
  op          TEXT   NOT NULL,
  barrier_id  TEXT   NOT NULL,
  reason      TEXT   NOT NULL,
  create_time BIGINT NOT NULL,
  PRIMARY KEY (gid, branch_id, op, barrier_id)
);
DO $$
BEGIN
  IF to_regclass(quote_ident(current_schema()) || '.barrier_create_time') IS NULL THEN
    CREATE INDEX barrier_create_time ON barrier (create_time);
  END IF;
END
$$;
COMMIT;
)sql";

// $1..$7: trans_type, gid, branch_id, op, barrier_id, reason, create_time. Affects no row when
// the key is taken; waits for a transaction that holds the same key uncommitted (or prepared)
// to end first.
inline constexpr std::string_view kInsertPostgresBarrierRowSql =
    "INSERT INTO barrier (trans_type, gid, branch_id, op, barrier_id, reason, create_time) "
    "VALUES ($1::text, $2::text, $3::text, $4::text, $5::text, $6::text, $7::bigint) "
    "ON CONFLICT (gid, branch_id, op, barrier_id) DO NOTHING";

// $1..$4: gid, branch_id, op, barrier_id.
inline constexpr std::string_view kSelectPostgresBarrierReasonSql =
    "SELECT reason FROM barrier WHERE gid = $1::text AND branch_id = $2::text "
    "AND op = $3::text AND barrier_id = $4::text";

}  // namespace settle::sdk
