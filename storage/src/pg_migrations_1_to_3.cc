// The PostgreSQL schema's migrations to versions 1 to 3 (pg_migrations.h says what each does).
#include "pg_migrations.h"

namespace settle::storage {

extern const char* const kPgMigration1 = R"sql(
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
)sql";

extern const char* const kPgMigration2 = R"sql(
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
)sql";

extern const char* const kPgMigration3 = R"sql(
CREATE FUNCTION settle_now() RETURNS BIGINT
LANGUAGE sql VOLATILE AS $$ SELECT (extract(epoch FROM clock_timestamp()) * 1000)::BIGINT $$;

CREATE TABLE settle_instances (
  id          TEXT   PRIMARY KEY,
  lease_until BIGINT NOT NULL
);
ALTER TABLE trans_global ADD COLUMN owner TEXT NOT NULL DEFAULT '';
CREATE INDEX trans_global_due ON trans_global (next_cron_time)
  WHERE status IN ('prepared', 'submitted', 'aborting');
)sql";

}  // namespace settle::storage
