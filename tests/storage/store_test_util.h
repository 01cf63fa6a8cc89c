#pragma once

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "settle/storage/store.h"

// Assertions shared by the Store contract tests: each REQUIREs success and returns the value.
namespace settle::storage::testing {

// Commits `batch` and requires it to succeed.
inline void MustCommit(Store& store, const WriteBatch& batch) {
  Status s = store.Commit(batch);
  INFO(s.ToString());
  REQUIRE(s.ok());
}

inline Transaction MustLoad(Store& store, const std::string& gid) {
  Result<std::optional<Transaction>> loaded = store.Load(gid);
  INFO(loaded.status().ToString());
  REQUIRE(loaded);
  REQUIRE(loaded->has_value());
  return **loaded;
}

inline ListPage MustList(Store& store, const ListQuery& query) {
  Result<ListPage> page = store.List(query);
  INFO(page.status().ToString());
  REQUIRE(page);
  return *page;
}

inline std::vector<std::string> Gids(const ListPage& page) {
  std::vector<std::string> gids;
  for (const GlobalRecord& g : page.transactions) gids.push_back(g.gid);
  return gids;
}

}  // namespace settle::storage::testing
