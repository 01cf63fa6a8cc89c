// The PostgreSQL schema's migration to version 12 (pg_migrations.h says what it does).
#include "pg_migrations.h"

namespace settle::storage {

extern const char* const kPgMigration12 = R"sql(
ALTER TABLE trans_global ADD COLUMN trace TEXT NOT NULL DEFAULT '';
ALTER TABLE trans_global ADD COLUMN trace_parent TEXT NOT NULL DEFAULT '';
ALTER TABLE trans_global ADD COLUMN trace_state TEXT NOT NULL DEFAULT '';

-- InsertGlobal with its creator and its span ('igt'): the row in one INSERT, with the checks
-- and message of settle_apply_op's 'ig', which a coordinator of an earlier version still sends
-- (its rows have no span: '').
CREATE FUNCTION settle_op_igt(o JSONB) RETURNS VOID
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO trans_global (gid, trans_type, status, options, create_time, update_time,
                            finish_time, rollback_time, rollback_reason, next_cron_time, stuck,
                            force_stopped, creator, trace, trace_parent, trace_state)
  VALUES (o->>'gid', o->>'tt', o->>'st', decode(o->>'opt', 'hex'), (o->>'ct')::BIGINT,
          (o->>'ut')::BIGINT, (o->>'ft')::BIGINT, (o->>'rt')::BIGINT, decode(o->>'rr', 'hex'),
          (o->>'nc')::BIGINT, (o->>'sk')::INTEGER, (o->>'fs')::INTEGER,
          COALESCE(o->>'cr', ''), COALESCE(o->>'tr', ''), COALESCE(o->>'tp', ''),
          COALESCE(o->>'ts', ''))
  ON CONFLICT (gid) DO NOTHING;
  IF NOT FOUND THEN
    PERFORM settle_refuse('SE410', 'gid ' || (o->>'gid') || ' already exists');
  END IF;
END $$;
)sql";

}  // namespace settle::storage
