// guarded-service: a test-only participant with one entry point guarded by the SDK's
// IdempotencyGuard, for tests that kill it with SIGKILL around the guard's commit
// (guard_crash_cases.h).
//
//   guarded-service --port 0 (--sqlite FILE | --postgres CONNINFO)
//                   [--crash before-commit|after-commit] [--lease 2s]
//
// POST /orders (Idempotency-Key required) inserts a row into the `orders` table in the guard's
// transaction and answers 201 {"order": ID}; GET /orders/count answers {"count": N}, the rows
// committed. With --crash the process raises SIGKILL on its first order, after printing a line
// that says where:
//   before-commit: in the handler, after its insert: the guard has not committed yet.
//   after-commit:  once the guard has returned, so the order and its answer have committed,
//                  before the answer is written to the connection.
#include <signal.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "settle/core/clock.h"
#include "settle/core/duration_text.h"
#include "settle/core/stop_signals.h"
#include "settle/db/pg_connection.h"
#include "settle/sdk/idempotency_guard.h"
#include "settle/sdk/participant.h"
#include "settle/sdk/postgres_barrier_store.h"
#include "settle/sdk/postgres_idempotency_store.h"
#include "settle/sdk/sqlite_barrier_store.h"
#include "settle/sdk/sqlite_idempotency_store.h"

namespace settle::sdk {
namespace {

// The service's `orders` table, and the idempotency store beside it, on one database.
class OrderTable {
 public:
  virtual ~OrderTable() = default;
  virtual IdempotencyStore& idempotency() = 0;
  // Inserts an order in `tx` (uncommitted); returns its id.
  virtual Result<std::int64_t> Insert(BarrierTransaction& tx, const std::string& body) = 0;
  // The committed orders.
  virtual Result<std::int64_t> Count() = 0;
};

class SqliteOrderTable final : public OrderTable {
 public:
  static Result<std::unique_ptr<OrderTable>> Open(const std::string& path) {
    auto table = std::unique_ptr<SqliteOrderTable>(new SqliteOrderTable);
    Result<std::unique_ptr<SqliteBarrierStore>> barrier = SqliteBarrierStore::Open(path);
    if (!barrier) return barrier.status();
    table->barrier_ = std::move(barrier).value();
    Result<std::unique_ptr<SqliteIdempotencyStore>> store =
        SqliteIdempotencyStore::Open(path, *table->barrier_);
    if (!store) return store.status();
    table->store_ = std::move(store).value();
    Result<std::unique_ptr<BarrierTransaction>> tx = table->barrier_->Begin();
    if (!tx) return tx.status();
    Result<std::int64_t> created = Run(SqliteBarrierStore::Connection(**tx),
                                       "CREATE TABLE IF NOT EXISTS orders ("
                                       "id INTEGER PRIMARY KEY, body TEXT NOT NULL)",
                                       std::nullopt);
    if (!created) return created.status();
    if (Status s = (*tx)->Commit(); !s.ok()) return s;
    return std::unique_ptr<OrderTable>(std::move(table));
  }

  IdempotencyStore& idempotency() override { return *store_; }

  Result<std::int64_t> Insert(BarrierTransaction& tx, const std::string& body) override {
    sqlite3* db = SqliteBarrierStore::Connection(tx);
    Result<std::int64_t> inserted = Run(db, "INSERT INTO orders (body) VALUES (?)", body);
    if (!inserted) return inserted.status();
    return static_cast<std::int64_t>(sqlite3_last_insert_rowid(db));
  }

  Result<std::int64_t> Count() override {
    Result<std::unique_ptr<BarrierTransaction>> tx = barrier_->Begin();
    if (!tx) return tx.status();
    return Run(SqliteBarrierStore::Connection(**tx), "SELECT count(*) FROM orders", std::nullopt);
  }

 private:
  SqliteOrderTable() = default;

  // Runs one statement with at most one text parameter; returns the first column of its first
  // row (0 without rows).
  static Result<std::int64_t> Run(sqlite3* db, const std::string& sql,
                                  const std::optional<std::string>& text) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
      return Status::Internal(sqlite3_errmsg(db));
    }
    if (text) sqlite3_bind_text(stmt, 1, text->data(), static_cast<int>(text->size()), nullptr);
    std::int64_t value = 0;
    int rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW) {
      value = sqlite3_column_int64(stmt, 0);
      rc = sqlite3_step(stmt);
    }
    Status status = rc == SQLITE_DONE ? Status::Ok() : Status::Internal(sqlite3_errmsg(db));
    sqlite3_finalize(stmt);
    if (!status.ok()) return status;
    return value;
  }

  std::unique_ptr<SqliteBarrierStore> barrier_;
  std::unique_ptr<SqliteIdempotencyStore> store_;
};

class PostgresOrderTable final : public OrderTable {
 public:
  static Result<std::unique_ptr<OrderTable>> Open(const std::string& conninfo) {
    auto table = std::unique_ptr<PostgresOrderTable>(new PostgresOrderTable);
    Result<std::unique_ptr<PostgresBarrierStore>> barrier = PostgresBarrierStore::Open(conninfo);
    if (!barrier) return barrier.status();
    table->barrier_ = std::move(barrier).value();
    Result<std::unique_ptr<PostgresIdempotencyStore>> store =
        PostgresIdempotencyStore::Open(*table->barrier_);
    if (!store) return store.status();
    table->store_ = std::move(store).value();
    Result<std::unique_ptr<BarrierTransaction>> tx = table->barrier_->Begin();
    if (!tx) return tx.status();
    Status s = PostgresBarrierStore::Connection(**tx)->Run(
        "CREATE TABLE IF NOT EXISTS orders (id BIGSERIAL PRIMARY KEY, body TEXT NOT NULL)");
    if (s.ok()) s = (*tx)->Commit();
    if (!s.ok()) return s;
    return std::unique_ptr<OrderTable>(std::move(table));
  }

  IdempotencyStore& idempotency() override { return *store_; }

  Result<std::int64_t> Insert(BarrierTransaction& tx, const std::string& body) override {
    Result<db::PgResult> row = PostgresBarrierStore::Connection(tx)->Query(
        "INSERT INTO orders (body) VALUES ($1) RETURNING id", db::PgParams().Text(body));
    if (!row) return row.status();
    return row->Int(0, 0);
  }

  Result<std::int64_t> Count() override {
    Result<std::unique_ptr<BarrierTransaction>> tx = barrier_->Begin();
    if (!tx) return tx.status();
    Result<db::PgResult> rows =
        PostgresBarrierStore::Connection(**tx)->Query("SELECT count(*) FROM orders");
    if (!rows) return rows.status();
    return rows->Int(0, 0);
  }

 private:
  PostgresOrderTable() = default;

  std::unique_ptr<PostgresBarrierStore> barrier_;
  std::unique_ptr<PostgresIdempotencyStore> store_;
};

// Says where the process dies, flushed so that the test reads it, and dies as kill -9 would.
[[noreturn]] void Die(const std::string& where) {
  std::printf("guarded-service: %s\n", where.c_str());
  std::fflush(stdout);
  raise(SIGKILL);
  std::abort();  // not reached
}

HttpReply Json(int status, const nlohmann::json& body) { return {status, body.dump()}; }

}  // namespace
}  // namespace settle::sdk

int main(int argc, char** argv) {
  using namespace settle::sdk;
  int port = 0;
  std::string sqlite_path;
  std::string postgres_conninfo;
  std::string crash;
  std::string lease_text = "60s";
  CLI::App app{"guarded-service: an IdempotencyGuard entry point to kill -9 in tests"};
  app.add_option("--port", port, "Port to listen on, on 127.0.0.1 (0: any free port)")
      ->required()
      ->check(CLI::Range(0, 65535));
  auto* sqlite = app.add_option("--sqlite", sqlite_path, "SQLite file (created if missing)");
  auto* postgres = app.add_option("--postgres", postgres_conninfo, "PostgreSQL conninfo");
  sqlite->excludes(postgres);
  app.add_option("--crash", crash, "Raise SIGKILL on the first order, at this point")
      ->check(CLI::IsMember({"before-commit", "after-commit"}));
  app.add_option("--lease", lease_text, "The guard's lease (IdempotencyOptions::lease)")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (sqlite_path.empty() == postgres_conninfo.empty()) {
    return std::fprintf(stderr, "one of --sqlite and --postgres is required\n"), 2;
  }
  settle::Result<settle::Duration> lease = settle::ParseDuration(lease_text);
  if (!lease) return std::fprintf(stderr, "--lease: %s\n", lease.status().message().c_str()), 2;

  settle::BlockStopSignals();  // before any thread starts

  settle::Result<std::unique_ptr<OrderTable>> orders =
      sqlite_path.empty() ? PostgresOrderTable::Open(postgres_conninfo)
                          : SqliteOrderTable::Open(sqlite_path);
  if (!orders) return std::fprintf(stderr, "%s\n", orders.status().ToString().c_str()), 1;
  OrderTable& table = **orders;
  settle::SystemClock clock;
  IdempotencyGuard guard(table.idempotency(), clock, {.lease = *lease});

  RouteHandler place =
      guard.Wrap([&](const HttpRequest& request, BarrierTransaction& tx) -> HttpReply {
        settle::Result<std::int64_t> id = table.Insert(tx, request.body);
        if (!id) return Json(503, {{"error", id.status().ToString()}});
        if (crash == "before-commit") {
          Die("order " + std::to_string(*id) + " inserted, killed before the guard's commit");
        }
        return Json(201, {{"order", *id}});
      });
  Participant participant;
  participant.OnPost("/orders", [&](const HttpRequest& request) {
    HttpReply reply = place(request);
    // The guard returns only after its commit: a 201 here is durably stored with its order.
    if (crash == "after-commit" && reply.status == 201) {
      Die("committed, killed before sending the answer " + reply.body);
    }
    return reply;
  });
  participant.OnGet("/orders/count", [&](const HttpRequest&) {
    settle::Result<std::int64_t> count = table.Count();
    if (!count) return Json(503, {{"error", count.status().ToString()}});
    return Json(200, {{"count", *count}});
  });

  settle::Result<int> bound = participant.Start("127.0.0.1", port);
  if (!bound) return std::fprintf(stderr, "%s\n", bound.status().ToString().c_str()), 1;
  std::printf("guarded-service: listening on http://127.0.0.1:%d\n", *bound);
  std::fflush(stdout);

  settle::WaitForStopSignal();
  participant.Stop();
  return 0;
}
