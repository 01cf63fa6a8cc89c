#include "settle/core/delete_in_batches.h"

namespace settle {

BatchedDeletion DeleteInBatches(const DeleteOneBatch& delete_one_batch, std::size_t batch_size,
                                const std::function<bool()>& should_stop) {
  BatchedDeletion done;
  if (batch_size == 0) {
    done.status = Status::InvalidArgument("delete in batches: batch_size must be at least 1");
    return done;
  }
  for (;;) {
    Result<std::size_t> deleted = delete_one_batch();
    if (!deleted) {
      done.status = deleted.status();
      return done;
    }
    done.deleted += *deleted;
    if (*deleted < batch_size) return done;
    if (should_stop && should_stop()) return done;
  }
}

}  // namespace settle
