#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "settle/core/clock.h"
#include "settle/core/status.h"

namespace settle::sdk {

// A row of the barrier table (docs/protocol.md §6.3), unique on (gid, branch_id, op, barrier_id).
struct BarrierRow {
  std::string trans_type;
  std::string gid;
  std::string branch_id;
  std::string op;          // try, confirm, cancel, action, compensate
  std::string barrier_id;  // "01" for the first guarded call of a handler
  std::string reason;      // the op whose call inserted the row
  TimePoint create_time;
};

// A local transaction on the participant's own database, in which the barrier rows and the
// business change commit or roll back together. Destroying it without Commit rolls back.
// Not thread-safe: one thread uses a transaction at a time.
class BarrierTransaction {
 public:
  virtual ~BarrierTransaction() = default;

  // Inserts `row` unless a row with the same (gid, branch_id, op, barrier_id) exists; true if
  // it inserted. A concurrent transaction inserting the same key makes this one wait until
  // that one ends, so of two racing calls for one branch the later sees the earlier's row.
  virtual Result<bool> InsertIfAbsent(const BarrierRow& row) = 0;

  // The reason stored in the row with this key, or nullopt if there is none.
  virtual Result<std::optional<std::string>> ReasonOf(const std::string& gid,
                                                      const std::string& branch_id,
                                                      const std::string& op,
                                                      const std::string& barrier_id) = 0;

  virtual Status Commit() = 0;
  virtual void Rollback() = 0;
};

// The database a barrier lives in: the participant's own. Thread-safe.
class BarrierStore {
 public:
  virtual ~BarrierStore() = default;

  // Starts a local transaction (Unavailable if the database cannot be reached).
  virtual Result<std::unique_ptr<BarrierTransaction>> Begin() = 0;

  // Deletes at most `limit` barrier rows created before `cutoff`, in one short transaction;
  // returns how many it deleted.
  virtual Result<std::size_t> DeleteCreatedBefore(TimePoint cutoff, std::size_t limit) = 0;
};

}  // namespace settle::sdk
