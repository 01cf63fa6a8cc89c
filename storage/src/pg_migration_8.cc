// The PostgreSQL schema's migration to version 8 (pg_migrations.h says what it does).
#include "pg_migrations.h"

namespace settle::storage {

extern const char* const kPgMigration8 = R"sql(
CREATE TABLE admin_audit (
  id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at         BIGINT NOT NULL,
  actor      BYTEA  NOT NULL,
  action     TEXT   NOT NULL,
  gid        TEXT   NOT NULL DEFAULT '',
  target     BYTEA  NOT NULL,
  parameters BYTEA  NOT NULL,
  reason     BYTEA  NOT NULL
);
CREATE INDEX admin_audit_gid ON admin_audit (gid, id) WHERE gid <> '';

CREATE FUNCTION settle_op_au(o JSONB) RETURNS VOID
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO admin_audit (at, actor, action, gid, target, parameters, reason)
  VALUES ((o->>'at')::BIGINT, decode(o->>'ac', 'hex'), o->>'act', o->>'gid',
          decode(o->>'tg', 'hex'), decode(o->>'pm', 'hex'), decode(o->>'rs', 'hex'));
END $$;

CREATE FUNCTION settle_op_ad(o JSONB) RETURNS VOID
LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM admin_audit WHERE at < (o->>'cutoff')::BIGINT;
END $$;

CREATE OR REPLACE FUNCTION settle_apply_group(batches JSONB) RETURNS JSONB
LANGUAGE plpgsql AS $$
DECLARE
  batch JSONB;
  op JSONB;
  t TEXT;
  results JSONB := '[]';
BEGIN
  FOR batch IN SELECT value FROM jsonb_array_elements(batches) LOOP
    BEGIN
      FOR op IN SELECT value FROM jsonb_array_elements(batch) LOOP
        t := op->>'t';
        IF t = 'ib' THEN
          PERFORM settle_insert_branch(op);
        ELSIF t IN ('su', 'us', 'dt') THEN
          PERFORM settle_apply_topic_op(op);
          IF t = 'su' AND op ? 'cr' THEN
            UPDATE topic_subscriber SET creator = op->>'cr'
              WHERE topic = op->>'topic' AND url = op->>'url';
          END IF;
        ELSIF t = 'et' THEN
          PERFORM settle_expect_type(op);
        ELSIF t IN ('xc', 'xt') THEN
          PERFORM settle_expect_creator(op);
        ELSIF t IN ('ig', 'eg', 'ec', 'lr', 'ug', 'ub', 'rn', 'df') THEN
          PERFORM settle_apply_op(op);
          IF t = 'ig' AND op ? 'cr' THEN
            UPDATE trans_global SET creator = op->>'cr' WHERE gid = op->>'gid';
          END IF;
        ELSIF t ~ '^[a-z]{2,4}$' THEN
          -- Any other operation is its own function, settle_op_<t>: a later version adds one
          -- without replacing this router.
          EXECUTE format('SELECT settle_op_%s($1)', t) USING op;
        ELSE
          RAISE EXCEPTION 'settle_apply_group: unknown operation %', t;
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
