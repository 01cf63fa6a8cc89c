// The PostgreSQL schema's migration to version 7 (pg_migrations.h says what it does).
#include "pg_migrations.h"

namespace settle::storage {

extern const char* const kPgMigration7 = R"sql(
ALTER TABLE trans_branch_op RENAME COLUMN data TO body;
ALTER TABLE trans_branch_op ADD COLUMN body_of_branch TEXT NOT NULL DEFAULT '';
ALTER TABLE trans_branch_op ADD COLUMN body_of_op TEXT NOT NULL DEFAULT '';

CREATE FUNCTION settle_insert_branch(o JSONB) RETURNS VOID
LANGUAGE plpgsql AS $$
DECLARE
  g TEXT := o->>'gid';
  g_id BIGINT;
  cur TEXT;
  branch TEXT := 'branch ' || (o->>'bid') || '/' || (o->>'op') || ' of gid ' || (o->>'gid');
BEGIN
  SELECT id INTO g_id FROM trans_global WHERE gid = g;
  IF NOT FOUND THEN PERFORM settle_refuse('SE404', 'gid ' || g || ' not found'); END IF;
  INSERT INTO trans_branch_op (global_id, branch_id, op, seq, url, body, status, create_time,
                               update_time, attempts, failures, last_error, next_retry_at,
                               failed_attempts, body_of_branch, body_of_op)
  VALUES (g_id, o->>'bid', o->>'op', (o->>'seq')::INTEGER, o->>'url',
          decode(COALESCE(o->>'data', ''), 'hex'), o->>'st', (o->>'ct')::BIGINT,
          (o->>'ut')::BIGINT, (o->>'at')::INTEGER, (o->>'fl')::INTEGER, decode(o->>'le', 'hex'),
          (o->>'nr')::BIGINT, decode(o->>'fa', 'hex'), COALESCE(o->>'bo', ''),
          COALESCE(o->>'bop', ''))
  ON CONFLICT (global_id, branch_id, op) DO NOTHING;
  IF NOT FOUND THEN
    SELECT url INTO cur FROM trans_branch_op
      WHERE global_id = g_id AND branch_id = o->>'bid' AND op = o->>'op';
    IF cur <> o->>'url' THEN
      PERFORM settle_refuse('SE409', branch || ' is already registered with url ' || cur);
    END IF;
  ELSIF o ? 'bo' THEN
    PERFORM 1 FROM trans_branch_op
      WHERE global_id = g_id AND branch_id = o->>'bo' AND op = o->>'bop' AND body_of_branch = ''
        AND octet_length(body) = (o->>'bl')::BIGINT;
    IF NOT FOUND THEN
      PERFORM settle_refuse('SE409', branch || ' shares the body of branch ' || (o->>'bo') ||
                                     '/' || (o->>'bop') || ', which holds no such body');
    END IF;
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
        IF op->>'t' = 'ib' THEN
          PERFORM settle_insert_branch(op);
        ELSIF op->>'t' IN ('su', 'us', 'dt') THEN
          PERFORM settle_apply_topic_op(op);
          IF op->>'t' = 'su' AND op ? 'cr' THEN
            UPDATE topic_subscriber SET creator = op->>'cr'
              WHERE topic = op->>'topic' AND url = op->>'url';
          END IF;
        ELSIF op->>'t' = 'et' THEN
          PERFORM settle_expect_type(op);
        ELSIF op->>'t' IN ('xc', 'xt') THEN
          PERFORM settle_expect_creator(op);
        ELSE
          PERFORM settle_apply_op(op);
          IF op->>'t' = 'ig' AND op ? 'cr' THEN
            UPDATE trans_global SET creator = op->>'cr' WHERE gid = op->>'gid';
          END IF;
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

}  // namespace settle::storage
