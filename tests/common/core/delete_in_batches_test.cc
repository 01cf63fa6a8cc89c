// DeleteInBatches, the loop under the coordinator's retention and the SDK's barrier and
// idempotency cleanups: a backlog deleted a bounded batch per commit until a batch comes back
// short, a failure or a stop request ends it early.
#include "settle/core/delete_in_batches.h"

#include <catch2/catch.hpp>

#include <cstddef>
#include <vector>

namespace settle {
namespace {

// A table of `rows` old rows; each batch deletes up to `limit` of them, or fails when its turn
// comes up in `failing_batch` (1 for the first).
struct FakeTable {
  std::size_t rows = 0;
  std::size_t limit = 0;
  int failing_batch = 0;
  int batches = 0;

  DeleteOneBatch Batch() {
    return [this]() -> Result<std::size_t> {
      ++batches;
      if (batches == failing_batch) return Status::Unavailable("the database is locked");
      const std::size_t deleted = rows < limit ? rows : limit;
      rows -= deleted;
      return deleted;
    };
  }
};

TEST_CASE("batches run until one comes back short, and the total is every row deleted",
          "[common][delete_in_batches]") {
  FakeTable table{.rows = 7, .limit = 3};
  BatchedDeletion done = DeleteInBatches(table.Batch(), 3);
  CHECK(done.status.ok());
  CHECK(done.deleted == 7);
  CHECK(table.batches == 3);  // 3, 3, then 1: short, the last
  CHECK(table.rows == 0);
}

TEST_CASE("a backlog of an exact multiple of the batch ends with an empty batch",
          "[common][delete_in_batches]") {
  FakeTable table{.rows = 6, .limit = 3};
  BatchedDeletion done = DeleteInBatches(table.Batch(), 3);
  CHECK(done.status.ok());
  CHECK(done.deleted == 6);
  CHECK(table.batches == 3);  // 3, 3, then 0: a full batch cannot tell that nothing is left
}

TEST_CASE("nothing to delete is one empty batch and a total of 0", "[common][delete_in_batches]") {
  FakeTable table{.rows = 0, .limit = 3};
  BatchedDeletion done = DeleteInBatches(table.Batch(), 3);
  CHECK(done.status.ok());
  CHECK(done.deleted == 0);
  CHECK(table.batches == 1);
}

TEST_CASE("a failed batch ends the loop with its status and the rows deleted before it",
          "[common][delete_in_batches]") {
  FakeTable table{.rows = 10, .limit = 3, .failing_batch = 3};
  BatchedDeletion done = DeleteInBatches(table.Batch(), 3);
  CHECK(done.status.code() == StatusCode::kUnavailable);
  CHECK(done.status.message() == "the database is locked");
  CHECK(done.deleted == 6);  // the first two batches committed and stay deleted
  CHECK(table.batches == 3);
  CHECK(table.rows == 4);
}

TEST_CASE("should_stop is asked after each full batch only, and true ends the loop there",
          "[common][delete_in_batches]") {
  FakeTable table{.rows = 10, .limit = 3};
  std::vector<int> asked_after;  // the batch each question followed
  BatchedDeletion done = DeleteInBatches(table.Batch(), 3, [&] {
    asked_after.push_back(table.batches);
    return table.batches == 2;  // e.g. Stop() was called during the pause after batch 2
  });
  CHECK(done.status.ok());
  CHECK(done.deleted == 6);
  CHECK(table.batches == 2);
  CHECK(asked_after == std::vector<int>{1, 2});  // never before the first batch
}

TEST_CASE("should_stop is not asked after the short batch that ends the loop",
          "[common][delete_in_batches]") {
  FakeTable table{.rows = 4, .limit = 3};
  int asked = 0;
  BatchedDeletion done = DeleteInBatches(table.Batch(), 3, [&] {
    ++asked;
    return false;
  });
  CHECK(done.deleted == 4);
  CHECK(asked == 1);  // after the full batch of 3, not after the short batch of 1
}

TEST_CASE("a batch size of 0 is refused without running a batch", "[common][delete_in_batches]") {
  FakeTable table{.rows = 5, .limit = 3};
  BatchedDeletion done = DeleteInBatches(table.Batch(), 0);
  CHECK(done.status.code() == StatusCode::kInvalidArgument);
  CHECK(done.deleted == 0);
  CHECK(table.batches == 0);
}

}  // namespace
}  // namespace settle
