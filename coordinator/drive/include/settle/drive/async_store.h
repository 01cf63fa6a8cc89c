#pragma once

#include <optional>
#include <string>

#include "settle/async/asio.h"
#include "settle/async/await.h"
#include "settle/core/status.h"
#include "settle/storage/store.h"

namespace settle::drive {

// The Store as coroutines see it. A commit is handed to the store's group-commit thread and
// the coroutine resumes on its own executor once the batch is durable: no thread waits for
// an fsync. Reads run on the calling I/O thread when they are local and quick (SQLite's page
// cache), or on `blocking_reads` when they cross a network (PostgreSQL), so that an I/O
// thread never waits for a round trip.
//
// Lifetime: the store and `blocking_reads` must outlive it, and it every operation still
// running. Thread-safety: as the Store's.
class AsyncStore {
 public:
  // `blocking_reads` null: reads run on the calling thread.
  explicit AsyncStore(storage::Store& store, asio::thread_pool* blocking_reads = nullptr)
      : store_(store), blocking_reads_(blocking_reads) {}

  asio::awaitable<Status> Commit(storage::WriteBatch batch);
  asio::awaitable<Result<std::optional<storage::Transaction>>> Load(std::string gid);
  asio::awaitable<Result<storage::ListPage>> List(storage::ListQuery query);

  // Runs `work` (which may block on the store's reads) where reads run.
  template <typename Work>
  asio::awaitable<std::invoke_result_t<Work>> Read(Work work);

  storage::Store& store() { return store_; }
  asio::thread_pool* blocking_reads() { return blocking_reads_; }

 private:
  storage::Store& store_;
  asio::thread_pool* blocking_reads_;
};

template <typename Work>
asio::awaitable<std::invoke_result_t<Work>> AsyncStore::Read(Work work) {
  if (blocking_reads_ == nullptr) co_return work();
  co_return co_await async::Offload(*blocking_reads_, std::move(work));
}

}  // namespace settle::drive
