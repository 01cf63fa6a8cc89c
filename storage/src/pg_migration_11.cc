// The PostgreSQL schema's migration to version 11 (pg_migrations.h says what it does).
#include "pg_migrations.h"

namespace settle::storage {

extern const char* const kPgMigration11 = R"sql(
CREATE TABLE bulk_jobs (
  id         TEXT COLLATE "C" PRIMARY KEY,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  actor      BYTEA  NOT NULL,
  action     TEXT   NOT NULL,
  filter     BYTEA  NOT NULL,
  parameters BYTEA  NOT NULL,
  reason     BYTEA  NOT NULL,
  cursor     BIGINT NOT NULL,
  matched    BIGINT NOT NULL,
  acted      BIGINT NOT NULL,
  skipped    BIGINT NOT NULL,
  last_skip  BYTEA  NOT NULL,
  state      TEXT   NOT NULL
);

-- InsertJob: ON CONFLICT, so that two instances storing one id refuse the second.
CREATE FUNCTION settle_op_ij(o JSONB) RETURNS VOID
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO bulk_jobs (id, created_at, updated_at, actor, action, filter, parameters, reason,
                         cursor, matched, acted, skipped, last_skip, state)
  VALUES (o->>'id', (o->>'ca')::BIGINT, (o->>'ua')::BIGINT, decode(o->>'ac', 'hex'), o->>'act',
          decode(o->>'fl', 'hex'), decode(o->>'pm', 'hex'), decode(o->>'rs', 'hex'),
          (o->>'cur')::BIGINT, (o->>'mt')::BIGINT, (o->>'acd')::BIGINT, (o->>'sk')::BIGINT,
          decode(o->>'ls', 'hex'), o->>'st')
  ON CONFLICT (id) DO NOTHING;
  IF NOT FOUND THEN
    PERFORM settle_refuse('SE410', 'job ' || (o->>'id') || ' already exists');
  END IF;
END $$;

-- AdvanceJob: the UPDATE locks the job's row, so of two runs taking one step the second
-- re-reads the row the first left and finds the cursor moved.
CREATE FUNCTION settle_op_aj(o JSONB) RETURNS VOID
LANGUAGE plpgsql AS $$
BEGIN
  UPDATE bulk_jobs SET cursor = (o->>'cur')::BIGINT, acted = acted + (o->>'acd')::BIGINT,
                       skipped = skipped + (o->>'sk')::BIGINT,
                       last_skip = CASE WHEN o->>'ls' = '' THEN last_skip
                                        ELSE decode(o->>'ls', 'hex') END,
                       updated_at = (o->>'at')::BIGINT, state = o->>'st'
    WHERE id = o->>'id' AND state = 'running' AND cursor = (o->>'exp')::BIGINT;
  IF NOT FOUND THEN
    PERFORM 1 FROM bulk_jobs WHERE id = o->>'id';
    IF NOT FOUND THEN PERFORM settle_refuse('SE404', 'job ' || (o->>'id') || ' not found'); END IF;
    PERFORM settle_refuse('SE409', 'job ' || (o->>'id') || ' moved on');
  END IF;
END $$;

-- CancelJob: a running job only.
CREATE FUNCTION settle_op_cj(o JSONB) RETURNS VOID
LANGUAGE plpgsql AS $$
DECLARE
  cur TEXT;
BEGIN
  UPDATE bulk_jobs SET state = 'cancelled', updated_at = (o->>'at')::BIGINT
    WHERE id = o->>'id' AND state = 'running';
  IF NOT FOUND THEN
    SELECT state INTO cur FROM bulk_jobs WHERE id = o->>'id';
    IF NOT FOUND THEN PERFORM settle_refuse('SE404', 'job ' || (o->>'id') || ' not found'); END IF;
    PERFORM settle_refuse('SE409', 'job ' || (o->>'id') || ' is ' || cur || ', not running');
  END IF;
END $$;

-- DeleteJobsBefore: retention keeps every running job.
CREATE FUNCTION settle_op_dj(o JSONB) RETURNS VOID
LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM bulk_jobs WHERE state <> 'running' AND updated_at < (o->>'cutoff')::BIGINT;
END $$;
)sql";

}  // namespace settle::storage
