#include "settle/drive/transaction_finished.h"

#include "settle/drive/transaction_spans.h"

namespace settle::drive {

void TransactionFinished(const storage::Transaction& tx, TimePoint now, CoordinatorMetrics& metrics,
                         SpanSink* spans) {
  metrics.TransactionFinished(tx.global.trans_type, tx.global.status);
  if (spans != nullptr && IsSampled(tx.global.trace)) spans->Export(TransactionSpan(tx, now));
}

}  // namespace settle::drive
