#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "settle/core/clock.h"
#include "settle/core/protocol.h"
#include "settle/storage/records.h"

namespace settle::coordinator {

// What the engine says to do with a transaction now. Pure data: computing it does no I/O.
struct Decision {
  // A status change to make (and store) before anything else; the caller applies it and
  // asks again.
  std::optional<GlobalStatus> next_status;
  std::string reason;  // why, for a move to aborting: becomes rollback_reason

  // Branch rows (indexes into Transaction::branches) to call now.
  std::vector<std::size_t> calls;

  // With no call to make now: the earliest time one becomes due (a retry, a timeout).
  // Absent when nothing will ever be due without outside input (finished, or waiting for the
  // client).
  std::optional<TimePoint> wake_at;
};

// The engine of the transaction's type (TCC, saga, message, XA). A branch row that has never been
// called is due at once; one that failed is due at its next_retry_at.
Decision Decide(const storage::Transaction& tx, TimePoint now);

// Applies a decided status change to the record: status, update_time, and the fields the
// change implies (rollback_time and rollback_reason on aborting, the reason too when failing
// without a rollback reason yet; finish_time, no
// next_cron_time and no stuck flag once finished).
void ApplyStatusChange(storage::GlobalRecord& global, GlobalStatus to, const std::string& reason,
                       TimePoint now);

}  // namespace settle::coordinator
