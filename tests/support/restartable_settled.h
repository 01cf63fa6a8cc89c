#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "json_client.h"
#ifdef SETTLE_TEST_STORE_POSTGRES
#include "postgres_test_database.h"
#endif
#include "settled_process.h"
#include "temp_dir.h"

namespace settle::testing {

// A settled process on a database of its own, restartable as after kill -9: a SQLite file, or,
// in a suite compiled with SETTLE_TEST_STORE_POSTGRES, a PostgreSQL database of its own.
struct RestartableSettled {
  TempDir dir;
#ifdef SETTLE_TEST_STORE_POSTGRES
  PostgresTestDatabase database;
  std::string store = database.conninfo();
#else
  std::string store = dir.File("settle.db");
#endif
  std::vector<std::string> args;  // read at each start
  std::unique_ptr<SettledProcess> settled;
  std::unique_ptr<JsonClient> client;
  std::atomic<int> port{0};  // the running one's, for other threads

  explicit RestartableSettled(std::vector<std::string> start_args) : args(std::move(start_args)) {
    Start();
  }
  void Start() {
    settled = std::make_unique<SettledProcess>(store, args, 0, dir.File("settled.log"));
    port = settled->port();
    client = std::make_unique<JsonClient>(settled->port());
  }
  void KillAndRestart() {
    client.reset();
    settled->Kill();
    Start();
  }
};

}  // namespace settle::testing
