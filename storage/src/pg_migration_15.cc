// The PostgreSQL schema's migration to version 15 (pg_migrations.h says what it does).
#include "pg_migrations.h"

namespace settle::storage {

extern const char* const kPgMigration15 = R"sql(
CREATE INDEX trans_global_failed_rollbacks ON trans_global (finish_time)
  WHERE status = 'failed' AND force_stopped = 0 AND trans_type IN ('tcc', 'xa');
)sql";

}  // namespace settle::storage
