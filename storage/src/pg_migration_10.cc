// The PostgreSQL schema's migration to version 10 (pg_migrations.h says what it does).
#include "pg_migrations.h"

namespace settle::storage {

extern const char* const kPgMigration10 = R"sql(
-- RedirectBranch: a pending row's url changed by an operator, due at 'at'.
CREATE FUNCTION settle_op_rd(o JSONB) RETURNS VOID
LANGUAGE plpgsql AS $$
DECLARE
  g TEXT := o->>'gid';
  name TEXT := 'branch ' || (o->>'bid') || ' (' || (o->>'op') || ') of gid ' || (o->>'gid');
  cur TEXT;
BEGIN
  UPDATE trans_branch_op SET url = o->>'url', next_retry_at = (o->>'at')::BIGINT
    WHERE global_id = (SELECT id FROM trans_global WHERE gid = g)
      AND branch_id = o->>'bid' AND op = o->>'op' AND status = 'prepared';
  IF NOT FOUND THEN
    SELECT b.status INTO cur FROM trans_branch_op AS b JOIN trans_global AS tg
      ON tg.id = b.global_id WHERE tg.gid = g AND b.branch_id = o->>'bid' AND b.op = o->>'op';
    IF NOT FOUND THEN PERFORM settle_refuse('SE404', name || ' not found'); END IF;
    PERFORM settle_refuse('SE409', name || ' is ' || cur || ', not pending');
  END IF;
END $$;
)sql";

}  // namespace settle::storage
