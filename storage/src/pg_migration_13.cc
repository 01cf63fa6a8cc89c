// The PostgreSQL schema's migration to version 13 (pg_migrations.h says what it does).
#include "pg_migrations.h"

namespace settle::storage {

extern const char* const kPgMigration13 = R"sql(
ALTER TABLE trans_global ADD COLUMN result BYTEA NOT NULL DEFAULT ''::BYTEA;

-- UpdateGlobal with a workflow's result ('ugr'): the compare-and-set of 'ug', with its checks
-- and refusals, then the result, in the same transaction.
CREATE FUNCTION settle_op_ugr(o JSONB) RETURNS VOID
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM settle_apply_op(jsonb_set(o, '{t}', '"ug"'));
  UPDATE trans_global SET result = decode(o->>'res', 'hex') WHERE gid = o->>'gid';
END $$;
)sql";

}  // namespace settle::storage
