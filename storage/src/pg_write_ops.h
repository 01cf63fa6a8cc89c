#pragma once

#include "settle/common/pg_connection.h"
#include "settle/common/status.h"
#include "settle/storage/write_batch.h"

namespace settle::storage {

// Applies one operation of a WriteBatch with the semantics stated in write_batch.h, inside the
// transaction the caller has open on `connection` (the writer's connection): the PostgreSQL
// twin of sqlite_write_ops.h, with the same refusals and messages.
Status ApplyWriteOp(PgConnection& connection, const WriteOp& op);

}  // namespace settle::storage
