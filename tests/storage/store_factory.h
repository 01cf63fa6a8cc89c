#pragma once

#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include "settle/storage/store.h"

#ifdef SETTLE_TEST_STORE_POSTGRES
#include "postgres_test_database.h"
#include "settle/storage/postgres_store.h"
#else
#include "settle/storage/sqlite_store.h"
#include "temp_dir.h"
#endif

namespace settle::storage::testing {

// The Store that the contract tests (store_*contract_test.cc) run against: a fresh, empty
// store that lives as long as this object. The contract tests are compiled twice: with
// SETTLE_TEST_STORE_POSTGRES it is a PostgresStore in a schema of its own on the test server
// (see postgres_test_database.h); otherwise a SqliteStore in a temporary directory.
class TestStore {
 public:
  TestStore() {
#ifdef SETTLE_TEST_STORE_POSTGRES
    auto opened = PostgresStore::Open(database_.conninfo());
#else
    auto opened = SqliteStore::Open(dir_.File("settle.db"));
#endif
    INFO(opened.status().ToString());
    REQUIRE(opened);
    store_ = std::move(opened).value();
  }

  Store& operator*() { return *store_; }
  Store* operator->() { return store_.get(); }

 private:
#ifdef SETTLE_TEST_STORE_POSTGRES
  settle::testing::PostgresTestDatabase database_;
#else
  settle::testing::TempDir dir_;
#endif
  std::unique_ptr<Store> store_;
};

}  // namespace settle::storage::testing
