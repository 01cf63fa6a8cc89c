#pragma once

#include <catch2/catch.hpp>

#include <string>

#include "settle/core/clock.h"
#include "settle/engine/request_fingerprint.h"
#include "settle/engine/transaction_types.h"
#include "settle/storage/sqlite_store.h"

namespace settle::testing {

// Stores `request` as a version of settled without today's checks would have: its rows built
// and written straight into the SQLite file `db`, which settled then opens (and resumes).
// REQUIRES: no process holds `db` open.
inline void StoreAsBefore(const std::string& db, const engine::SubmitRequest& request) {
  auto store = storage::SqliteStore::Open(db);
  REQUIRE(store);
  auto built =
      engine::BuildSubmitted(request, {}, {}, SystemClock().Now(), engine::FingerprintOf(request));
  REQUIRE(built);
  storage::WriteBatch insert;
  insert.Add(storage::InsertGlobal{built->global});
  for (const storage::BranchRecord& row : built->branches) insert.Add(storage::InsertBranch{row});
  REQUIRE((*store)->Commit(insert).ok());
}

}  // namespace settle::testing
