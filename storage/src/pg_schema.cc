#include "pg_schema.h"

#include <array>
#include <string>

namespace settle::storage {
namespace {

// Forward-only migrations; migration i (0-based) brings the database to version i + 1. Never
// edit a migration that has shipped: add a new one.
//
// The tables mirror the SQLite schema at its version 4 (see schema.cc): times are Unix
// milliseconds; branch rows are keyed by their global's id. Bodies, errors, options and
// reasons are BYTEA: they carry whatever bytes a client or participant sent, which TEXT
// would refuse (NUL bytes, invalid UTF-8). gid, branch_id and url are TEXT; the coordinator
// validates them before they get here.
//
// Version 2 adds settle_apply_group (pg_group_applier.h): a group commit is then one
// statement, one round trip and one WAL flush, instead of a round trip per operation. It
// applies each batch in its own subtransaction (an exception block) with the checks and
// messages of write_batch.h; a refusal raises SQLSTATE SE404 (NotFound), SE409 (Conflict),
// SE410 (AlreadyExists) or SE400 (InvalidArgument), which rolls back that batch alone and is
// reported in the result: a JSON array with null for each applied batch and [sqlstate,
// message] for each refused one. Bytes arrive hex-encoded. A data exception (class 22) in a
// batch is its refusal too; any other error fails the whole group.
//
// Version 3 adds instance leases (instance_leases.h): settle_instances holds each
// coordinator instance's lease expiry in the database's clock (Unix milliseconds, from
// settle_now()), trans_global.owner the instance driving each transaction ('' for none). A
// partial index on next_cron_time serves ListClaimable's scan of unfinished transactions by
// due time.
//
// Version 4 adds topic subscriptions, as SQLite's version 5 does: topic_subscriber holds one
// row per (topic, url), and its identity `seq` is the subscription order. Topic names use the
// "C" collation, so that they compare and sort byte for byte as in SQLite, whatever the
// database's locale. settle_apply_topic_op applies the topic operations with the checks and
// messages of write_batch.h, and settle_apply_group is replaced by one that hands them to it
// and every other operation to settle_apply_op, unchanged: a coordinator of the previous
// version still running on the database goes on working.
//
// Version 5 serializes a branch registration with every decision on its transaction (the
// timeout/registration race): the status check of 'eg' (ExpectGlobalStatus) locks the global
// row FOR SHARE until the group commits, and 'ec' (ExpectBranchCount) locks it as an UPDATE
// does before it counts, so under READ COMMITTED a count cannot miss a registration whose
// status check passed, and a registration waiting on a decision reads the status it committed.
// It adds force_stopped (an operator's forceStop, as SQLite's version 6; the transactions whose
// reason names one are marked), which 'ig' and 'ug' write when the batch carries it (a
// coordinator of the previous version sends none: 0, or left as it is), and 'df' keeps a failed TCC
// or XA whose cancels are still to be made (undone_rollbacks.h). settle_apply_op is replaced whole;
// its other operations are unchanged.
constexpr std::array<const char*, 5> kMigrations = {
    R"sql(
CREATE TABLE trans_global (
  id              BIGINT  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  gid             TEXT    NOT NULL UNIQUE,
  trans_type      TEXT    NOT NULL,
  status          TEXT    NOT NULL,
  options         BYTEA   NOT NULL,
  create_time     BIGINT  NOT NULL,
  update_time     BIGINT  NOT NULL,
  finish_time     BIGINT,
  rollback_time   BIGINT,
  rollback_reason BYTEA   NOT NULL,
  next_cron_time  BIGINT,
  stuck           INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX trans_global_status ON trans_global (status, id);
CREATE INDEX trans_global_trans_type ON trans_global (trans_type, id);
CREATE INDEX trans_global_stuck ON trans_global (id) WHERE stuck = 1;
CREATE INDEX trans_global_finish_time ON trans_global (finish_time)
  WHERE finish_time IS NOT NULL;

CREATE TABLE trans_branch_op (
  global_id       BIGINT  NOT NULL,
  branch_id       TEXT    NOT NULL,
  op              TEXT    NOT NULL,
  seq             INTEGER NOT NULL,
  url             TEXT    NOT NULL,
  data            BYTEA   NOT NULL,
  status          TEXT    NOT NULL,
  create_time     BIGINT  NOT NULL,
  update_time     BIGINT  NOT NULL,
  attempts        INTEGER NOT NULL,
  failures        INTEGER NOT NULL,
  last_error      BYTEA   NOT NULL,
  next_retry_at   BIGINT  NOT NULL,
  failed_attempts BYTEA   NOT NULL,
  PRIMARY KEY (global_id, branch_id, op)
);
)sql",
    R"sql(
CREATE FUNCTION settle_refuse(code TEXT, message TEXT) RETURNS VOID
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION USING ERRCODE = code, MESSAGE = message;
END $$;

CREATE FUNCTION settle_branch_count(p_gid TEXT) RETURNS BIGINT
LANGUAGE plpgsql AS $$
DECLARE
  g_id BIGINT;
BEGIN
  SELECT id INTO g_id FROM trans_global WHERE gid = p_gid;
  IF NOT FOUND THEN PERFORM settle_refuse('SE404', 'gid ' || p_gid || ' not found'); END IF;
  RETURN (SELECT count(*) FROM trans_branch_op WHERE global_id = g_id);
END $$;

CREATE FUNCTION settle_apply_op(o JSONB) RETURNS VOID
LANGUAGE plpgsql AS $$
DECLARE
  t TEXT := o->>'t';
  g TEXT := o->>'gid';
  g_id BIGINT;
  cur TEXT;
  n BIGINT;
  branch TEXT;
BEGIN
  IF t = 'ig' THEN
    INSERT INTO trans_global (gid, trans_type, status, options, create_time, update_time,
                              finish_time, rollback_time, rollback_reason, next_cron_time, stuck)
    VALUES (g, o->>'tt', o->>'st', decode(o->>'opt', 'hex'), (o->>'ct')::BIGINT,
            (o->>'ut')::BIGINT, (o->>'ft')::BIGINT, (o->>'rt')::BIGINT,
            decode(o->>'rr', 'hex'), (o->>'nc')::BIGINT, (o->>'sk')::INTEGER)
    ON CONFLICT (gid) DO NOTHING;
    IF NOT FOUND THEN PERFORM settle_refuse('SE410', 'gid ' || g || ' already exists'); END IF;

  ELSIF t = 'ib' THEN
    branch := 'branch ' || (o->>'bid') || '/' || (o->>'op') || ' of gid ' || g;
    SELECT id INTO g_id FROM trans_global WHERE gid = g;
    IF NOT FOUND THEN PERFORM settle_refuse('SE404', 'gid ' || g || ' not found'); END IF;
    INSERT INTO trans_branch_op (global_id, branch_id, op, seq, url, data, status, create_time,
                                 update_time, attempts, failures, last_error, next_retry_at,
                                 failed_attempts)
    VALUES (g_id, o->>'bid', o->>'op', (o->>'seq')::INTEGER, o->>'url',
            decode(o->>'data', 'hex'), o->>'st', (o->>'ct')::BIGINT, (o->>'ut')::BIGINT,
            (o->>'at')::INTEGER, (o->>'fl')::INTEGER, decode(o->>'le', 'hex'),
            (o->>'nr')::BIGINT, decode(o->>'fa', 'hex'))
    ON CONFLICT (global_id, branch_id, op) DO NOTHING;
    IF NOT FOUND THEN
      SELECT url INTO cur FROM trans_branch_op
        WHERE global_id = g_id AND branch_id = o->>'bid' AND op = o->>'op';
      IF cur <> o->>'url' THEN
        PERFORM settle_refuse('SE409', branch || ' is already registered with url ' || cur);
      END IF;
    END IF;

  ELSIF t = 'eg' THEN
    SELECT status INTO cur FROM trans_global WHERE gid = g;
    IF NOT FOUND THEN PERFORM settle_refuse('SE404', 'gid ' || g || ' not found'); END IF;
    IF NOT (o->'allowed') ? cur THEN
      PERFORM settle_refuse('SE409', 'gid ' || g || ' is ' || cur || ', expected ' ||
                                     (o->>'expected'));
    END IF;

  ELSIF t = 'ec' THEN
    n := settle_branch_count(g);
    IF n <> (o->>'n')::BIGINT THEN
      PERFORM settle_refuse('SE409', 'gid ' || g || ' has ' || n || ' branch rows, expected ' ||
                                     (o->>'n'));
    END IF;

  ELSIF t = 'lr' THEN
    n := settle_branch_count(g);
    IF n > (o->>'max')::BIGINT THEN
      PERFORM settle_refuse('SE400', 'branch_id: gid ' || g || ' would have ' || n ||
                                     ' branch rows, more than the ' || (o->>'max') || ' allowed');
    END IF;

  ELSIF t = 'ug' THEN
    UPDATE trans_global SET status = o->>'st', update_time = (o->>'ut')::BIGINT,
        finish_time = (o->>'ft')::BIGINT, rollback_time = (o->>'rt')::BIGINT,
        rollback_reason = decode(o->>'rr', 'hex'), next_cron_time = (o->>'nc')::BIGINT,
        stuck = (o->>'sk')::INTEGER
      WHERE gid = g AND status = o->>'expected';
    IF NOT FOUND THEN
      SELECT status INTO cur FROM trans_global WHERE gid = g;
      IF NOT FOUND THEN PERFORM settle_refuse('SE404', 'gid ' || g || ' not found'); END IF;
      PERFORM settle_refuse('SE409', 'gid ' || g || ' is ' || cur || ', expected ' ||
                                     (o->>'expected'));
    END IF;

  ELSIF t = 'ub' THEN
    branch := 'branch ' || (o->>'bid') || '/' || (o->>'op') || ' of gid ' || g;
    UPDATE trans_branch_op SET status = o->>'st', update_time = (o->>'ut')::BIGINT,
        attempts = (o->>'at')::INTEGER, failures = (o->>'fl')::INTEGER,
        last_error = decode(o->>'le', 'hex'), next_retry_at = (o->>'nr')::BIGINT,
        failed_attempts = decode(o->>'fa', 'hex')
      WHERE global_id = (SELECT id FROM trans_global WHERE gid = g)
        AND branch_id = o->>'bid' AND op = o->>'op' AND status = o->>'expected';
    IF NOT FOUND THEN
      SELECT b.status INTO cur FROM trans_branch_op AS b JOIN trans_global AS tg
        ON tg.id = b.global_id WHERE tg.gid = g AND b.branch_id = o->>'bid' AND b.op = o->>'op';
      IF NOT FOUND THEN PERFORM settle_refuse('SE404', branch || ' not found'); END IF;
      PERFORM settle_refuse('SE409', branch || ' is ' || cur || ', expected ' ||
                                     (o->>'expected'));
    END IF;

  ELSIF t = 'rn' THEN
    UPDATE trans_global SET next_cron_time = (o->>'at')::BIGINT
      WHERE gid = g AND status IN ('prepared', 'submitted', 'aborting')
      RETURNING id INTO g_id;
    IF NOT FOUND THEN
      SELECT status INTO cur FROM trans_global WHERE gid = g;
      IF NOT FOUND THEN PERFORM settle_refuse('SE404', 'gid ' || g || ' not found'); END IF;
      PERFORM settle_refuse('SE409', 'gid ' || g || ' is ' || cur || ', already finished');
    END IF;
    UPDATE trans_branch_op SET next_retry_at = (o->>'at')::BIGINT
      WHERE global_id = g_id AND status = 'prepared';

  ELSIF t = 'df' THEN
    DELETE FROM trans_global WHERE gid = g AND status IN ('succeed', 'failed')
      RETURNING id INTO g_id;
    IF FOUND THEN
      DELETE FROM trans_branch_op WHERE global_id = g_id;
    ELSE
      SELECT status INTO cur FROM trans_global WHERE gid = g;
      IF FOUND THEN
        PERFORM settle_refuse('SE409', 'gid ' || g || ' is ' || cur || ', not finished');
      END IF;
    END IF;

  ELSE
    RAISE EXCEPTION 'settle_apply_op: unknown operation %', t;
  END IF;
END $$;

CREATE FUNCTION settle_apply_group(batches JSONB) RETURNS JSONB
LANGUAGE plpgsql AS $$
DECLARE
  batch JSONB;
  op JSONB;
  results JSONB := '[]';
BEGIN
  FOR batch IN SELECT value FROM jsonb_array_elements(batches) LOOP
    BEGIN
      FOR op IN SELECT value FROM jsonb_array_elements(batch) LOOP
        PERFORM settle_apply_op(op);
      END LOOP;
      results := results || 'null'::JSONB;
    EXCEPTION WHEN OTHERS THEN
      IF SQLSTATE NOT LIKE 'SE%' AND SQLSTATE NOT LIKE '22%' THEN RAISE; END IF;
      results := results || jsonb_build_array(jsonb_build_array(SQLSTATE, SQLERRM));
    END;
  END LOOP;
  RETURN results;
END $$;
)sql",
    R"sql(
CREATE FUNCTION settle_now() RETURNS BIGINT
LANGUAGE sql VOLATILE AS $$ SELECT (extract(epoch FROM clock_timestamp()) * 1000)::BIGINT $$;

CREATE TABLE settle_instances (
  id          TEXT   PRIMARY KEY,
  lease_until BIGINT NOT NULL
);
ALTER TABLE trans_global ADD COLUMN owner TEXT NOT NULL DEFAULT '';
CREATE INDEX trans_global_due ON trans_global (next_cron_time)
  WHERE status IN ('prepared', 'submitted', 'aborting');
)sql",
    R"sql(
CREATE TABLE topic_subscriber (
  seq         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  topic       TEXT   COLLATE "C" NOT NULL,
  url         TEXT   NOT NULL,
  remark      BYTEA  NOT NULL,
  create_time BIGINT NOT NULL,
  UNIQUE (topic, url)
);

CREATE FUNCTION settle_apply_topic_op(o JSONB) RETURNS VOID
LANGUAGE plpgsql AS $$
DECLARE
  t TEXT := o->>'t';
  p_topic TEXT := o->>'topic';
  p_url TEXT := o->>'url';
BEGIN
  IF t = 'su' THEN
    INSERT INTO topic_subscriber (topic, url, remark, create_time)
    VALUES (p_topic, p_url, decode(o->>'rm', 'hex'), (o->>'ct')::BIGINT)
    ON CONFLICT (topic, url) DO NOTHING;
    IF NOT FOUND THEN
      PERFORM settle_refuse('SE410', 'url ' || p_url || ' already subscribes to topic ' ||
                                     p_topic);
    END IF;

  ELSIF t = 'us' THEN
    DELETE FROM topic_subscriber WHERE topic = p_topic AND url = p_url;
    IF NOT FOUND THEN
      PERFORM settle_refuse('SE404', 'url ' || p_url || ' does not subscribe to topic ' ||
                                     p_topic);
    END IF;

  ELSIF t = 'dt' THEN
    DELETE FROM topic_subscriber WHERE topic = p_topic;
    IF NOT FOUND THEN PERFORM settle_refuse('SE404', 'topic ' || p_topic || ' not found'); END IF;

  ELSE
    RAISE EXCEPTION 'settle_apply_topic_op: unknown operation %', t;
  END IF;
END $$;

CREATE FUNCTION settle_expect_type(o JSONB) RETURNS VOID
LANGUAGE plpgsql AS $$
DECLARE
  g TEXT := o->>'gid';
  cur TEXT;
BEGIN
  SELECT trans_type INTO cur FROM trans_global WHERE gid = g;
  IF NOT FOUND THEN PERFORM settle_refuse('SE404', 'gid ' || g || ' not found'); END IF;
  IF cur <> o->>'tt' THEN
    PERFORM settle_refuse('SE409', 'gid ' || g || ' is a ' || cur || ' transaction, not ' ||
                                   (o->>'tt'));
  END IF;
END $$;

CREATE OR REPLACE FUNCTION settle_apply_group(batches JSONB) RETURNS JSONB
LANGUAGE plpgsql AS $$
DECLARE
  batch JSONB;
  op JSONB;
  results JSONB := '[]';
BEGIN
  FOR batch IN SELECT value FROM jsonb_array_elements(batches) LOOP
    BEGIN
      FOR op IN SELECT value FROM jsonb_array_elements(batch) LOOP
        IF op->>'t' IN ('su', 'us', 'dt') THEN
          PERFORM settle_apply_topic_op(op);
        ELSIF op->>'t' = 'et' THEN
          PERFORM settle_expect_type(op);
        ELSE
          PERFORM settle_apply_op(op);
        END IF;
      END LOOP;
      results := results || 'null'::JSONB;
    EXCEPTION WHEN OTHERS THEN
      IF SQLSTATE NOT LIKE 'SE%' AND SQLSTATE NOT LIKE '22%' THEN RAISE; END IF;
      results := results || jsonb_build_array(jsonb_build_array(SQLSTATE, SQLERRM));
    END;
  END LOOP;
  RETURN results;
END $$;
)sql",
    R"sql(
ALTER TABLE trans_global ADD COLUMN force_stopped INTEGER NOT NULL DEFAULT 0;
UPDATE trans_global SET force_stopped = 1
  WHERE status = 'failed'
    AND position('stopped by an operator (forceStop'::bytea IN rollback_reason) > 0;

CREATE OR REPLACE FUNCTION settle_apply_op(o JSONB) RETURNS VOID
LANGUAGE plpgsql AS $$
DECLARE
  t TEXT := o->>'t';
  g TEXT := o->>'gid';
  g_id BIGINT;
  cur TEXT;
  n BIGINT;
  branch TEXT;
BEGIN
  IF t = 'ig' THEN
    INSERT INTO trans_global (gid, trans_type, status, options, create_time, update_time,
                              finish_time, rollback_time, rollback_reason, next_cron_time, stuck,
                              force_stopped)
    VALUES (g, o->>'tt', o->>'st', decode(o->>'opt', 'hex'), (o->>'ct')::BIGINT,
            (o->>'ut')::BIGINT, (o->>'ft')::BIGINT, (o->>'rt')::BIGINT,
            decode(o->>'rr', 'hex'), (o->>'nc')::BIGINT, (o->>'sk')::INTEGER,
            COALESCE((o->>'fs')::INTEGER, 0))
    ON CONFLICT (gid) DO NOTHING;
    IF NOT FOUND THEN PERFORM settle_refuse('SE410', 'gid ' || g || ' already exists'); END IF;

  ELSIF t = 'ib' THEN
    branch := 'branch ' || (o->>'bid') || '/' || (o->>'op') || ' of gid ' || g;
    SELECT id INTO g_id FROM trans_global WHERE gid = g;
    IF NOT FOUND THEN PERFORM settle_refuse('SE404', 'gid ' || g || ' not found'); END IF;
    INSERT INTO trans_branch_op (global_id, branch_id, op, seq, url, data, status, create_time,
                                 update_time, attempts, failures, last_error, next_retry_at,
                                 failed_attempts)
    VALUES (g_id, o->>'bid', o->>'op', (o->>'seq')::INTEGER, o->>'url',
            decode(o->>'data', 'hex'), o->>'st', (o->>'ct')::BIGINT, (o->>'ut')::BIGINT,
            (o->>'at')::INTEGER, (o->>'fl')::INTEGER, decode(o->>'le', 'hex'),
            (o->>'nr')::BIGINT, decode(o->>'fa', 'hex'))
    ON CONFLICT (global_id, branch_id, op) DO NOTHING;
    IF NOT FOUND THEN
      SELECT url INTO cur FROM trans_branch_op
        WHERE global_id = g_id AND branch_id = o->>'bid' AND op = o->>'op';
      IF cur <> o->>'url' THEN
        PERFORM settle_refuse('SE409', branch || ' is already registered with url ' || cur);
      END IF;
    END IF;

  ELSIF t = 'eg' THEN
    SELECT status INTO cur FROM trans_global WHERE gid = g FOR SHARE;
    IF NOT FOUND THEN PERFORM settle_refuse('SE404', 'gid ' || g || ' not found'); END IF;
    IF NOT (o->'allowed') ? cur THEN
      PERFORM settle_refuse('SE409', 'gid ' || g || ' is ' || cur || ', expected ' ||
                                     (o->>'expected'));
    END IF;

  ELSIF t = 'ec' THEN
    PERFORM 1 FROM trans_global WHERE gid = g FOR NO KEY UPDATE;
    n := settle_branch_count(g);
    IF n <> (o->>'n')::BIGINT THEN
      PERFORM settle_refuse('SE409', 'gid ' || g || ' has ' || n || ' branch rows, expected ' ||
                                     (o->>'n'));
    END IF;

  ELSIF t = 'lr' THEN
    n := settle_branch_count(g);
    IF n > (o->>'max')::BIGINT THEN
      PERFORM settle_refuse('SE400', 'branch_id: gid ' || g || ' would have ' || n ||
                                     ' branch rows, more than the ' || (o->>'max') || ' allowed');
    END IF;

  ELSIF t = 'ug' THEN
    UPDATE trans_global SET status = o->>'st', update_time = (o->>'ut')::BIGINT,
        finish_time = (o->>'ft')::BIGINT, rollback_time = (o->>'rt')::BIGINT,
        rollback_reason = decode(o->>'rr', 'hex'), next_cron_time = (o->>'nc')::BIGINT,
        stuck = (o->>'sk')::INTEGER,
        force_stopped = COALESCE((o->>'fs')::INTEGER, force_stopped)
      WHERE gid = g AND status = o->>'expected';
    IF NOT FOUND THEN
      SELECT status INTO cur FROM trans_global WHERE gid = g;
      IF NOT FOUND THEN PERFORM settle_refuse('SE404', 'gid ' || g || ' not found'); END IF;
      PERFORM settle_refuse('SE409', 'gid ' || g || ' is ' || cur || ', expected ' ||
                                     (o->>'expected'));
    END IF;

  ELSIF t = 'ub' THEN
    branch := 'branch ' || (o->>'bid') || '/' || (o->>'op') || ' of gid ' || g;
    UPDATE trans_branch_op SET status = o->>'st', update_time = (o->>'ut')::BIGINT,
        attempts = (o->>'at')::INTEGER, failures = (o->>'fl')::INTEGER,
        last_error = decode(o->>'le', 'hex'), next_retry_at = (o->>'nr')::BIGINT,
        failed_attempts = decode(o->>'fa', 'hex')
      WHERE global_id = (SELECT id FROM trans_global WHERE gid = g)
        AND branch_id = o->>'bid' AND op = o->>'op' AND status = o->>'expected';
    IF NOT FOUND THEN
      SELECT b.status INTO cur FROM trans_branch_op AS b JOIN trans_global AS tg
        ON tg.id = b.global_id WHERE tg.gid = g AND b.branch_id = o->>'bid' AND b.op = o->>'op';
      IF NOT FOUND THEN PERFORM settle_refuse('SE404', branch || ' not found'); END IF;
      PERFORM settle_refuse('SE409', branch || ' is ' || cur || ', expected ' ||
                                     (o->>'expected'));
    END IF;

  ELSIF t = 'rn' THEN
    UPDATE trans_global SET next_cron_time = (o->>'at')::BIGINT
      WHERE gid = g AND status IN ('prepared', 'submitted', 'aborting')
      RETURNING id INTO g_id;
    IF NOT FOUND THEN
      SELECT status INTO cur FROM trans_global WHERE gid = g;
      IF NOT FOUND THEN PERFORM settle_refuse('SE404', 'gid ' || g || ' not found'); END IF;
      PERFORM settle_refuse('SE409', 'gid ' || g || ' is ' || cur || ', already finished');
    END IF;
    UPDATE trans_branch_op SET next_retry_at = (o->>'at')::BIGINT
      WHERE global_id = g_id AND status = 'prepared';

  ELSIF t = 'df' THEN
    DELETE FROM trans_global AS tg WHERE tg.gid = g AND tg.status IN ('succeed', 'failed')
      AND NOT (tg.status = 'failed' AND tg.force_stopped = 0 AND tg.trans_type IN ('tcc', 'xa')
               AND EXISTS (SELECT 1 FROM trans_branch_op AS undone
                           WHERE undone.global_id = tg.id AND undone.op IN ('cancel', 'rollback')
                             AND undone.status = 'prepared'))
      RETURNING id INTO g_id;
    IF FOUND THEN
      DELETE FROM trans_branch_op WHERE global_id = g_id;
    ELSE
      SELECT status INTO cur FROM trans_global WHERE gid = g;
      IF FOUND AND cur = 'failed' THEN
        PERFORM settle_refuse('SE409', 'gid ' || g || ' is failed with cancels still to be made');
      ELSIF FOUND THEN
        PERFORM settle_refuse('SE409', 'gid ' || g || ' is ' || cur || ', not finished');
      END IF;
    END IF;

  ELSE
    RAISE EXCEPTION 'settle_apply_op: unknown operation %', t;
  END IF;
END $$;
)sql",
};

// The advisory lock that serializes migrations: any constant, and the schema the tables are
// created in.
constexpr const char* kMigrationLock =
    "SELECT pg_advisory_xact_lock(74372853, hashtext(current_schema()))";

Status Failed(db::PgConnection& connection, int version, const Status& cause) {
  if (connection.InTransaction()) connection.Run("ROLLBACK").IgnoreError();
  return Status::Unavailable("migrating the postgresql schema to version " +
                             std::to_string(version) + ": " + cause.message());
}

}  // namespace

int LatestPgSchemaVersion() { return static_cast<int>(kMigrations.size()); }

Result<int> ReadPgSchemaVersion(db::PgConnection& connection) {
  Result<db::PgResult> exists = connection.Query("SELECT to_regclass('settle_schema') IS NOT NULL");
  if (!exists) return exists.status();
  if (exists->Text(0, 0) != "t") return 0;
  Result<db::PgResult> version = connection.Query("SELECT version FROM settle_schema");
  if (!version) return version.status();
  if (version->rows() == 0) return 0;  // created, and nothing migrated yet
  if (version->rows() != 1) {
    return Status::Unavailable("postgresql: settle_schema has " + std::to_string(version->rows()) +
                               " rows, expected 1");
  }
  return static_cast<int>(version->Int(0, 0));
}

Status MigratePgSchema(db::PgConnection& connection) {
  return MigratePgSchema(connection, LatestPgSchemaVersion());
}

Status MigratePgSchema(db::PgConnection& connection, int target_version) {
  const int latest = LatestPgSchemaVersion();
  if (target_version < 1 || target_version > latest) {
    return Status::InvalidArgument("no postgresql schema version " +
                                   std::to_string(target_version));
  }
  for (;;) {
    if (Status s = connection.Run("BEGIN"); !s.ok()) return s;
    if (Status s = connection.Run(kMigrationLock); !s.ok()) return Failed(connection, 0, s);
    // Under the lock: another coordinator may have migrated while this one waited.
    Status s =
        connection.Run("CREATE TABLE IF NOT EXISTS settle_schema (version INTEGER NOT NULL)");
    Result<int> version = s.ok() ? ReadPgSchemaVersion(connection) : Result<int>(s);
    if (!version) return Failed(connection, 0, version.status());
    if (*version > latest) {
      connection.Run("ROLLBACK").IgnoreError();
      return Status::Unavailable("database schema version " + std::to_string(*version) +
                                 " is newer than this binary's version " + std::to_string(latest) +
                                 "; upgrade Settle to use it");
    }
    if (*version >= target_version) return connection.Run("COMMIT");
    const int next = *version + 1;
    s = connection.Run(kMigrations[next - 1]);
    if (s.ok() && *version == 0) s = connection.Run("INSERT INTO settle_schema VALUES (0)");
    if (s.ok()) {
      s = connection.Run("UPDATE settle_schema SET version = " + std::to_string(next));
    }
    if (s.ok()) s = connection.Run("COMMIT");
    if (!s.ok()) return Failed(connection, next, s);
  }
}

}  // namespace settle::storage
