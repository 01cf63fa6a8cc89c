#include "settle/drive/async_store.h"

#include "settle/async/await.h"

namespace settle::drive {

asio::awaitable<Status> AsyncStore::Commit(storage::WriteBatch batch) {
  co_return co_await async::AwaitCallback<Status>(
      [this, &batch](auto done) { store_.CommitAsync(std::move(batch), std::move(done)); });
}

asio::awaitable<Result<std::optional<storage::Transaction>>> AsyncStore::Load(std::string gid) {
  co_return co_await Read([this, &gid] { return store_.Load(gid); });
}

asio::awaitable<Result<storage::ListPage>> AsyncStore::List(storage::ListQuery query) {
  co_return co_await Read([this, &query] { return store_.List(query); });
}

}  // namespace settle::drive
