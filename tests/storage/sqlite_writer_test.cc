// The writer thread's lifecycle: what Commit does while and after the store shuts down.
#include "sqlite_writer.h"

#include <catch2/catch.hpp>

#include <latch>
#include <string>
#include <thread>
#include <vector>

#include "record_builders.h"
#include "schema.h"
#include "settle/db/sqlite_connection.h"
#include "temp_dir.h"

namespace settle::storage::testing {
namespace {

using settle::testing::TempDir;

std::unique_ptr<SqliteWriter> StartWriter(const std::string& path) {
  Result<std::unique_ptr<db::SqliteConnection>> c =
      db::SqliteConnection::Open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, 5000);
  REQUIRE(c);
  REQUIRE(MigrateSchema(**c).ok());
  SqliteStoreOptions options;
  options.max_batches_per_commit = 64;
  Result<std::unique_ptr<SqliteWriter>> writer =
      SqliteWriter::Start(std::move(c).value(), /*checkpointer=*/nullptr, options);
  REQUIRE(writer);
  return std::move(writer).value();
}

std::int64_t CountGlobals(const std::string& path) {
  Result<std::unique_ptr<db::SqliteConnection>> c =
      db::SqliteConnection::Open(path, SQLITE_OPEN_READONLY, 5000);
  REQUIRE(c);
  Result<db::SqliteStatement> stmt = (*c)->Prepare("SELECT count(*) FROM trans_global");
  REQUIRE(stmt);
  REQUIRE(*stmt->Step());
  return stmt->ColumnInt64(0);
}

TEST_CASE("a commit after shutdown started is refused with store is closed", "[storage][sqlite]") {
  TempDir dir;
  auto writer = StartWriter(dir.File("settle.db"));
  REQUIRE(writer->Commit(Batch(InsertGlobal{MakeGlobal("g1")})).ok());

  writer->Shutdown();

  Status s = writer->Commit(Batch(InsertGlobal{MakeGlobal("g2")}));
  CHECK(s.code() == StatusCode::kUnavailable);
  CHECK(s.message() == "store is closed");
  writer->Shutdown();  // idempotent
}

TEST_CASE("shutdown answers every caller: applied and durable, or refused as closed",
          "[storage][sqlite]") {
  TempDir dir;
  const std::string path = dir.File("settle.db");
  auto writer = StartWriter(path);
  constexpr int kCallers = 16;
  std::vector<Status> results(kCallers);
  std::latch start(kCallers + 1);
  std::vector<std::thread> threads;
  for (int i = 0; i < kCallers; ++i) {
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      results[i] = writer->Commit(Batch(InsertGlobal{MakeGlobal("g" + std::to_string(i))}));
    });
  }
  start.arrive_and_wait();
  writer->Shutdown();
  for (std::thread& thread : threads) thread.join();

  int applied = 0;
  for (const Status& s : results) {
    if (s.ok()) {
      ++applied;
    } else {
      CHECK(s.message() == "store is closed");
    }
  }
  CHECK(CountGlobals(path) == applied);
  CHECK(writer->Stats().batches == static_cast<std::uint64_t>(applied));
}

}  // namespace
}  // namespace settle::storage::testing
