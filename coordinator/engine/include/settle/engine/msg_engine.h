#pragma once

#include "settle/engine/decision.h"

namespace settle::coordinator {

// Transactional message (docs/protocol.md §2.1, §4.8). Its rows: the back-check (op msg,
// branch "00", seq -1) of a message that was prepared, and one action row per delivery (seq:
// the step index; a topic step has one row per subscriber).
// - prepared: waits for the client's submit or abort. Once timeout_to_fail has passed since
//   creation it asks the client's query_prepared URL (the back-check row) whether the local
//   transaction committed: SUCCESS -> submitted; FAILURE -> failed, nothing delivered;
//   ONGOING or an error -> asked again after the retry interval or the backoff.
// - submitted: nothing before create_time + delay. Then delivers row after row, in order (a
//   topic step's subscribers one after another, as DTM does), or with `concurrent` every row
//   at once, retrying each row
//   until its receiver answers SUCCESS (a FAILURE is retried like an error: a message has
//   nothing to roll back). Succeed once all are delivered. With retry_limit, a row that has
//   failed retry_limit times in a row ends the message failed (best-effort notification).
Decision DecideMsg(const storage::Transaction& tx, TimePoint now);

}  // namespace settle::coordinator
