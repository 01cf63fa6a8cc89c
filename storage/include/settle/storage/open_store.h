#pragma once

#include <memory>
#include <string>

#include "settle/storage/instance_leases.h"
#include "settle/storage/sqlite_store.h"
#include "settle/storage/store.h"

namespace settle::storage {

struct OpenedStore {
  std::unique_ptr<Store> store;
  // Set when several coordinators may share the store (PostgreSQL): the leases they take
  // turns with. Owned by `store`.
  InstanceLeases* leases = nullptr;
};

// Opens the store that `location` names: a postgresql:// (or postgres://) URL opens a
// PostgresStore shared through its leases, anything else is the path of an SQLite file,
// which one coordinator holds alone. The group-commit settings of `options`
// (max_batches_per_commit, commit_delay) apply to either; the rest to SQLite only.
Result<OpenedStore> OpenStore(const std::string& location, const SqliteStoreOptions& options = {});

// `location` fit for a log line: a URL's password is replaced by "***".
std::string RedactStoreLocation(const std::string& location);

}  // namespace settle::storage
