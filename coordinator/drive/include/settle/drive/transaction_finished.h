#pragma once

#include "settle/core/clock.h"
#include "settle/core/span.h"
#include "settle/drive/coordinator_metrics.h"
#include "settle/storage/records.h"

namespace settle::drive {

// What settled does once a transaction's final state is stored, whoever stored it (the
// driver's pass, or the coordinator for an abort or a forceStop): counts it in
// settle_transactions_finished_total and, when its caller sampled its trace and spans are
// exported (`spans` not null), reports its span (transaction_spans.h). Called once per
// transaction, right after the commit that finished it.
void TransactionFinished(const storage::Transaction& tx, TimePoint now, CoordinatorMetrics& metrics,
                         SpanSink* spans);

}  // namespace settle::drive
