#pragma once

#include <vector>

#include "settle/core/status.h"
#include "settle/engine/decision.h"
#include "settle/engine/requests.h"
#include "settle/engine/type_rules.h"

namespace settle::engine {

// The saga's descriptor (type_rules.h).
const TypeRules& SagaRules();

// A saga's submit (docs/protocol.md §3.8): 1 to kMaxSagaSteps steps, each with an http(s)
// action URL and an optional compensate URL, one payload per step; with `concurrent`, orders
// that name existing steps and wait for each other in no cycle. InvalidArgument naming the
// field otherwise.
Status CheckSaga(const SubmitRequest& request);

// The rows a saga's submit stores: step i's action and compensate rows, seq i, both with the
// step's payload; a step without a compensate URL has nothing to undo (its compensate row is
// succeeded already).
std::vector<storage::BranchRecord> SagaRows(const SubmitRequest& request, TimePoint now);

// Saga (docs/protocol.md §2.1, §4.5). Step i's action and compensate rows have seq i.
// - submitted: calls each action once the steps it waits for have succeeded: the previous
//   step, or with `concurrent` the steps named in `orders` (none: all at once). Succeed once
//   every action has succeeded. Moves to aborting when an action answered FAILURE, when an
//   action has failed retry_limit times in a row, or when timeout_to_fail has passed.
// - aborting: compensates every step whose action may have started (every step whose
//   prerequisites had all succeeded, the failed one included; a compensation of an action
//   that never ran is a no-op for the participant's barrier), in reverse order: a step is
//   compensated only after every started step that waited for it. Failed once all of those
//   compensations have succeeded.
Decision DecideSaga(const storage::Transaction& tx, TimePoint now);

// For each row of `tx`: whether the saga will still call it (RowsStillCalled).
std::vector<bool> SagaRowsStillCalled(const storage::Transaction& tx);

}  // namespace settle::engine
