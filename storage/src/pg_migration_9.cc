// The PostgreSQL schema's migration to version 9 (pg_migrations.h says what it does).
#include "pg_migrations.h"

namespace settle::storage {

extern const char* const kPgMigration9 = R"sql(
ALTER TABLE trans_global ADD COLUMN paused_at BIGINT;
ALTER TABLE trans_global ADD COLUMN paused_by BYTEA NOT NULL DEFAULT '';
ALTER TABLE trans_global ADD COLUMN paused_reason BYTEA NOT NULL DEFAULT '';
CREATE INDEX trans_global_paused ON trans_global (id) WHERE paused_at IS NOT NULL;

-- Why a pause or a resume changed nothing: a refusal, or nothing for a pause that keeps an
-- existing one.
CREATE FUNCTION settle_pause_refusal(g TEXT, pausing BOOLEAN, keep_existing BOOLEAN)
RETURNS VOID LANGUAGE plpgsql AS $$
DECLARE
  cur TEXT;
BEGIN
  SELECT status INTO cur FROM trans_global WHERE gid = g;
  IF NOT FOUND THEN PERFORM settle_refuse('SE404', 'gid ' || g || ' not found'); END IF;
  IF cur IN ('succeed', 'failed') THEN
    PERFORM settle_refuse('SE409', 'gid ' || g || ' is ' || cur || ', already finished');
  END IF;
  IF NOT pausing THEN PERFORM settle_refuse('SE409', 'gid ' || g || ' is not paused'); END IF;
  IF NOT keep_existing THEN
    PERFORM settle_refuse('SE409', 'gid ' || g || ' is already paused');
  END IF;
END $$;

-- PauseGlobal: the UPDATE locks the global row, so a pass's commit on it serializes with it.
CREATE FUNCTION settle_op_pa(o JSONB) RETURNS VOID
LANGUAGE plpgsql AS $$
BEGIN
  UPDATE trans_global SET paused_at = (o->>'at')::BIGINT, paused_by = decode(o->>'by', 'hex'),
                          paused_reason = decode(o->>'rs', 'hex')
    WHERE gid = o->>'gid' AND status IN ('prepared', 'submitted', 'aborting')
      AND paused_at IS NULL;
  IF NOT FOUND THEN
    PERFORM settle_pause_refusal(o->>'gid', true, COALESCE((o->>'keep')::BOOLEAN, false));
  END IF;
END $$;

-- ResumeGlobal: the pause cleared and every pending call due at 'at', as RetryNow.
CREATE FUNCTION settle_op_re(o JSONB) RETURNS VOID
LANGUAGE plpgsql AS $$
DECLARE
  g_id BIGINT;
BEGIN
  UPDATE trans_global SET paused_at = NULL, paused_by = '', paused_reason = '',
                          next_cron_time = (o->>'at')::BIGINT
    WHERE gid = o->>'gid' AND status IN ('prepared', 'submitted', 'aborting')
      AND paused_at IS NOT NULL
    RETURNING id INTO g_id;
  IF NOT FOUND THEN
    PERFORM settle_pause_refusal(o->>'gid', false, false);
  END IF;
  UPDATE trans_branch_op SET next_retry_at = (o->>'at')::BIGINT
    WHERE global_id = g_id AND status = 'prepared';
END $$;
)sql";

}  // namespace settle::storage
