#pragma once

#include "settle/engine/decision.h"

namespace settle::coordinator {

// TCC (docs/protocol.md §2.1, §4.4, §4.7):
// - prepared: waits for the client's submit or abort; once timeout_to_fail has passed since
//   creation, moves to aborting.
// - submitted: calls every branch's confirm in parallel; succeed once all have succeeded.
// - aborting: calls every registered branch's cancel in parallel (the participant's barrier
//   turns a cancel without Try into a no-op); failed once all have succeeded.
Decision DecideTcc(const storage::Transaction& tx, TimePoint now);

}  // namespace settle::coordinator
