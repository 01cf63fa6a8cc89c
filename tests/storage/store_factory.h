#pragma once

#include <catch2/catch.hpp>

#include <memory>

#include "settle/storage/sqlite_store.h"
#include "settle/storage/store.h"
#include "temp_dir.h"

namespace settle::storage::testing {

// The Store that the contract tests (store_contract_test.cc) run against: a fresh, empty
// store that lives as long as this object. Today a SqliteStore in a temporary directory; when
// a PostgresStore exists, this is where a test run chooses it (e.g. from an environment
// variable naming its database), and every contract test then covers both.
class TestStore {
 public:
  TestStore() {
    Result<std::unique_ptr<SqliteStore>> opened = SqliteStore::Open(dir_.File("settle.db"));
    INFO(opened.status().ToString());
    REQUIRE(opened);
    store_ = std::move(opened).value();
  }

  Store& operator*() { return *store_; }
  Store* operator->() { return store_.get(); }

 private:
  settle::testing::TempDir dir_;
  std::unique_ptr<Store> store_;
};

}  // namespace settle::storage::testing
