#pragma once

#include <span>
#include <string>

#include "group_committer.h"
#include "settle/core/status.h"
#include "settle/db/pg_connection.h"
#include "settle/storage/write_batch.h"

namespace settle::storage {

// Group commit's transaction on PostgreSQL: the whole group goes to the server as one JSON
// argument of settle_apply_group (pg_schema.cc, schema version 2), which applies each batch
// in a subtransaction with the checks and messages of write_batch.h and commits once. One
// statement, one round trip, one WAL flush per group, however many batches and operations it
// holds.
//
// A batch that cannot be sent (a gid, branch id, topic or url with a NUL byte or invalid UTF-8,
// options JSON cannot carry) is refused with InvalidArgument here and the rest of the group
// goes on. If the statement fails, every batch gets Unavailable and nothing is stored.
//
// Lifetime: `connection` must outlive it. Thread-safety: none; it uses the connection it was
// given, which nothing else may use.
class PgGroupApplier {
 public:
  explicit PgGroupApplier(db::PgConnection& connection) : connection_(connection) {}

  GroupResult ApplyGroup(std::span<const WriteBatch* const> batches);

  // The JSON array settle_apply_group takes for one batch, or InvalidArgument naming the field
  // that cannot be sent.
  static Result<std::string> EncodeBatch(const WriteBatch& batch);

 private:
  db::PgConnection& connection_;
};

}  // namespace settle::storage
