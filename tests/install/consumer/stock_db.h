#pragma once
// The stock table both consumer programs keep in their SQLite file beside the barrier: one
// row, the units reserved. Header-only, so that each program still builds from its one .cc
// with pkg-config as well as with CMake.
#include <cstdio>

#include "settle/sdk/barrier.h"
#include "settle/sdk/sqlite_barrier_store.h"

namespace stock {

inline settle::Status Exec(settle::sdk::BarrierTransaction& tx, const char* sql) {
  char* error = nullptr;
  if (sqlite3_exec(settle::sdk::SqliteBarrierStore::Connection(tx), sql, nullptr, nullptr,
                   &error) == SQLITE_OK) {
    return settle::Status::Ok();
  }
  settle::Status failed = settle::Status::Unavailable(error == nullptr ? "sqlite failed" : error);
  sqlite3_free(error);
  return failed;
}

// Prints what failed as `program`, and is the exit status 1.
inline int Fail(const char* program, const char* what, const settle::Status& status) {
  std::fprintf(stderr, "%s: %s: %s\n", program, what, status.ToString().c_str());
  return 1;
}

// The table, with its row, if they are not there yet.
inline settle::Status Create(settle::sdk::SqliteBarrierStore& store) {
  auto tx = store.Begin();
  if (!tx) return tx.status();
  settle::Status s = Exec(**tx,
                          "CREATE TABLE IF NOT EXISTS stock (reserved INTEGER NOT NULL);"
                          "INSERT INTO stock SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM stock)");
  return s.ok() ? (*tx)->Commit() : s;
}

// The units reserved now; -1 when they cannot be read.
inline sqlite3_int64 Reserved(settle::sdk::SqliteBarrierStore& store) {
  sqlite3_int64 reserved = -1;
  auto tx = store.Begin();
  if (!tx) return reserved;
  sqlite3_stmt* stmt = nullptr;
  sqlite3_prepare_v2(settle::sdk::SqliteBarrierStore::Connection(**tx),
                     "SELECT reserved FROM stock", -1, &stmt, nullptr);
  if (sqlite3_step(stmt) == SQLITE_ROW) reserved = sqlite3_column_int64(stmt, 0);
  sqlite3_finalize(stmt);
  return reserved;
}

// The saga step's two handlers: reserve a unit, release it.
inline settle::Status Reserve(const settle::sdk::BranchRequest&,
                              settle::sdk::BarrierTransaction& tx) {
  return Exec(tx, "UPDATE stock SET reserved = reserved + 1");
}
inline settle::Status Release(const settle::sdk::BranchRequest&,
                              settle::sdk::BarrierTransaction& tx) {
  return Exec(tx, "UPDATE stock SET reserved = reserved - 1");
}

}  // namespace stock
