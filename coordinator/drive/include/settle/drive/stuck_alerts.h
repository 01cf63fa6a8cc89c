#pragma once

#include "settle/storage/records.h"

namespace settle::drive {

// Where the driver reports a transaction that needs an operator: one it has just flagged stuck
// (stored as stuck), or a message that has just given up delivering (stored as failed, with
// rollback_reason saying which receiver did not answer, after retry_limit failures); and where
// the coordinator reports an operator's action once it is stored (the audit trail), so that
// the other operators learn of it.
// Thread-safety: from many threads at once.
class StuckAlerts {
 public:
  virtual ~StuckAlerts() = default;
  // Must not block on I/O: the driver calls it in the middle of a pass.
  virtual void TransactionStuck(const storage::Transaction& tx) = 0;
  // Must not block on I/O either. By default, nothing.
  virtual void AdminAction(const storage::AuditEntry& /*entry*/) {}
  // A transaction the pause-after policy has just paused (stored with its pause). Must not
  // block on I/O. By default, nothing.
  virtual void TransactionParked(const storage::Transaction& /*tx*/) {}
};

}  // namespace settle::drive
