// The PostgreSQL schema's migration to version 6 (pg_migrations.h says what it does).
#include "pg_migrations.h"

namespace settle::storage {

extern const char* const kPgMigration6 = R"sql(
ALTER TABLE trans_global ADD COLUMN creator TEXT NOT NULL DEFAULT '';
CREATE INDEX trans_global_creator ON trans_global (creator, id);
ALTER TABLE topic_subscriber ADD COLUMN creator TEXT NOT NULL DEFAULT '';

CREATE FUNCTION settle_expect_creator(o JSONB) RETURNS VOID
LANGUAGE plpgsql AS $$
DECLARE
  cur TEXT;
BEGIN
  IF o->>'t' = 'xc' THEN
    SELECT creator INTO cur FROM trans_global WHERE gid = o->>'gid';
    IF NOT FOUND OR (cur <> '' AND cur <> o->>'cr') THEN
      PERFORM settle_refuse('SE404', 'gid ' || (o->>'gid') || ' not found');
    END IF;
  ELSE
    -- Two first subscriptions of one topic by two callers: one waits for the other's commit.
    PERFORM pg_advisory_xact_lock(hashtext('settle topic ' || (o->>'topic')));
    SELECT creator INTO cur FROM topic_subscriber WHERE topic = o->>'topic' ORDER BY seq LIMIT 1;
    IF FOUND AND cur <> '' AND cur <> o->>'cr' THEN
      PERFORM settle_refuse('SE409', 'topic ' || (o->>'topic') || ' belongs to another client');
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
        IF op->>'t' IN ('su', 'us', 'dt') THEN
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
