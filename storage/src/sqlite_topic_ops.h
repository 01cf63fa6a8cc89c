#pragma once

#include "settle/core/status.h"
#include "settle/db/sqlite_connection.h"
#include "settle/storage/write_batch.h"

namespace settle::storage {

// The topic operations of a WriteBatch on SQLite (table topic_subscriber, schema version 5),
// with the semantics stated in write_batch.h and the contract of ApplyWriteOp
// (sqlite_write_ops.h), which dispatches to them: OK, a refusal of the batch (AlreadyExists,
// NotFound, naming the topic and the url) that changed nothing, or a storage failure.
Status ApplyTopicOp(db::SqliteConnection& connection, const Subscribe& op);
Status ApplyTopicOp(db::SqliteConnection& connection, const Unsubscribe& op);
Status ApplyTopicOp(db::SqliteConnection& connection, const DeleteTopic& op);
Status ApplyTopicOp(db::SqliteConnection& connection, const ExpectTopicCreator& op);

}  // namespace settle::storage
