// The PostgreSQL schema's migration to version 14 (pg_migrations.h says what it does).
#include "pg_migrations.h"

namespace settle::storage {

extern const char* const kPgMigration14 = R"sql(
-- UpdateBranch as read ('ubr'): the row must still have the url and next_retry_at its writer
-- read, then 'ub' (settle_apply_op: its compare on the status, its refusals, the update). The
-- row is locked first, so that a redirect or a Retry now commits before the compare or after
-- the whole batch. A status that is not the expected one is refused by 'ub', in its words.
CREATE FUNCTION settle_op_ubr(o JSONB) RETURNS VOID
LANGUAGE plpgsql AS $$
DECLARE
  cur_status TEXT;
  cur_url TEXT;
  cur_next BIGINT;
BEGIN
  SELECT b.status, b.url, b.next_retry_at INTO cur_status, cur_url, cur_next
    FROM trans_branch_op AS b JOIN trans_global AS tg ON tg.id = b.global_id
    WHERE tg.gid = o->>'gid' AND b.branch_id = o->>'bid' AND b.op = o->>'op'
    FOR UPDATE OF b;
  IF FOUND AND cur_status = o->>'expected' AND
     (cur_url <> o->>'url' OR cur_next <> (o->>'rnr')::BIGINT) THEN
    PERFORM settle_refuse('SE409', 'branch ' || (o->>'bid') || '/' || (o->>'op') || ' of gid ' ||
                                   (o->>'gid') || ' was redirected or made due since it was read');
  END IF;
  PERFORM settle_apply_op(jsonb_set(o, '{t}', '"ub"'));
END $$;
)sql";

}  // namespace settle::storage
