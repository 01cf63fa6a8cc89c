#include "settle/storage/open_store.h"

#include "settle/storage/postgres_store.h"

namespace settle::storage {

Result<OpenedStore> OpenStore(const std::string& location, const SqliteStoreOptions& options) {
  if (IsPostgresLocation(location)) {
    PostgresStoreOptions postgres;
    postgres.max_batches_per_commit = options.max_batches_per_commit;
    postgres.commit_delay = options.commit_delay;
    postgres.clock = options.clock;
    postgres.exclusive = false;  // the leases keep instances apart
    Result<std::unique_ptr<PostgresStore>> store = PostgresStore::Open(location, postgres);
    if (!store) return store.status();
    OpenedStore opened;
    opened.leases = &(*store)->leases();
    opened.store = std::move(store).value();
    return opened;
  }
  Result<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(location, options);
  if (!store) return store.status();
  OpenedStore opened;
  opened.store = std::move(store).value();
  return opened;
}

std::string RedactStoreLocation(const std::string& location) {
  if (!IsPostgresLocation(location)) return location;
  // scheme://[user[:password]@]host...: the userinfo ends at the last '@' before the path.
  const std::size_t authority = location.find("://") + 3;
  const std::size_t path = location.find_first_of("/?", authority);
  const std::size_t at = location.rfind('@', path == std::string::npos ? location.size() : path);
  if (at == std::string::npos || at < authority) return location;
  const std::size_t colon = location.find(':', authority);
  if (colon == std::string::npos || colon > at) return location;
  return location.substr(0, colon + 1) + "***" + location.substr(at);
}

}  // namespace settle::storage
