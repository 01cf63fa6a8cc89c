// The PostgreSQL schema's migrations to versions 4 and 5 (pg_migrations.h says what each does).
#include "pg_migrations.h"

namespace settle::storage {

extern const char* const kPgMigration4 = R"sql(
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
)sql";

extern const char* const kPgMigration5 = R"sql(
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
)sql";

}  // namespace settle::storage
