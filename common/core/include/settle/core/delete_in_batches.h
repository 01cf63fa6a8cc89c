#pragma once

#include <cstddef>
#include <functional>

#include "settle/core/status.h"

namespace settle {

// One batch of a bounded delete: deletes at most the batch size of rows, in a commit of its
// own, and returns how many it deleted.
using DeleteOneBatch = std::function<Result<std::size_t>()>;

// What DeleteInBatches did.
struct BatchedDeletion {
  std::size_t deleted = 0;  // by the batches that succeeded, those before a failed one included
  Status status;            // OK, or the failed batch's Status: the loop ended there
};

// Deletes a backlog a batch at a time, so that no one commit holds the database's writer for
// long: the coordinator's retention, the SDK's barrier cleanup and idempotency key cleaner.
//   - A batch that deleted fewer than `batch_size` rows was the last: nothing more is old
//     enough, and the loop ends without asking `should_stop`.
//   - A full batch means more may wait: `should_stop` is asked, and the next batch runs unless
//     it answers true. It is where a pause between batches goes, and where a Stop() is noticed
//     (PeriodicThread::Sleep is both). It is not asked before the first batch; an empty one
//     never stops.
//   - A failed batch ends the loop: its Status comes back with the rows deleted before it,
//     which stay deleted (each batch committed on its own).
// `batch_size` must be at least 1 (no batch could be short of 0): InvalidArgument, and no batch
// runs.
BatchedDeletion DeleteInBatches(const DeleteOneBatch& delete_one_batch, std::size_t batch_size,
                                const std::function<bool()>& should_stop = {});

}  // namespace settle
