#pragma once

#include <memory>
#include <string>

#include "settle/storage/sqlite_store.h"
#include "settle/storage/store.h"

namespace settle::storage {

// Opens the store that `location` names: a postgresql:// (or postgres://) URL opens a
// PostgresStore, anything else is the path of an SQLite file. The group-commit settings of
// `options` (max_batches_per_commit, commit_delay) apply to either; the rest to SQLite only.
Result<std::unique_ptr<Store>> OpenStore(const std::string& location,
                                         const SqliteStoreOptions& options = {});

// `location` fit for a log line: a URL's password is replaced by "***".
std::string RedactStoreLocation(const std::string& location);

}  // namespace settle::storage
