#pragma once

#include "settle/core/status.h"
#include "settle/db/sqlite_connection.h"
#include "settle/storage/write_batch.h"

namespace settle::storage {

// Applies one operation of a WriteBatch with the semantics stated in write_batch.h, inside the
// transaction the caller has open on `connection` (the writer's connection).
//
// Returns OK; a refusal that concerns only this operation's batch (AlreadyExists, NotFound,
// Conflict, with a message naming the gid or the topic, or InvalidArgument for a record that
// cannot be stored); or a storage failure (Unavailable, Internal) that concerns the whole
// transaction. A refused operation has changed nothing; earlier operations of its batch are the
// caller's to roll back.
Status ApplyWriteOp(db::SqliteConnection& connection, const WriteOp& op);

}  // namespace settle::storage
