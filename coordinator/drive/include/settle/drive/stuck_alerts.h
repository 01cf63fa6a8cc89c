#pragma once

#include "settle/storage/records.h"

namespace settle::drive {

// Where the driver reports a transaction that needs an operator: one it has just flagged stuck
// (stored as stuck), or a message that has just given up delivering (stored as failed, with
// rollback_reason saying which receiver did not answer, after retry_limit failures).
// Thread-safety: from many threads at once.
class StuckAlerts {
 public:
  virtual ~StuckAlerts() = default;
  // Must not block on I/O: the driver calls it in the middle of a pass.
  virtual void TransactionStuck(const storage::Transaction& tx) = 0;
};

}  // namespace settle::drive
