#include "order_entry_point.h"

#include <sqlite3.h>

#include <catch2/catch.hpp>
#include <cstdint>

namespace settle::testing {
namespace {

// Runs `sql` on `db`; the first column of its last row, as text, in `out` when given.
bool Exec(sqlite3* db, const std::string& sql, std::string* out = nullptr) {
  auto keep = [](void* target, int, char** values, char**) {
    if (target != nullptr && values[0] != nullptr) *static_cast<std::string*>(target) = values[0];
    return 0;
  };
  return sqlite3_exec(db, sql.c_str(), keep, out, nullptr) == SQLITE_OK;
}

}  // namespace

OrderEntryPoint::OrderEntryPoint(OrderEntryPointOptions options) : options_(options) {
  const std::string path = dir_.File("orders.db");
  Result<std::unique_ptr<sdk::SqliteBarrierStore>> barrier = sdk::SqliteBarrierStore::Open(path);
  REQUIRE(barrier);
  barrier_ = std::move(barrier).value();
  Result<std::unique_ptr<sdk::SqliteIdempotencyStore>> keys =
      sdk::SqliteIdempotencyStore::Open(path, *barrier_);
  REQUIRE(keys);
  keys_ = std::move(keys).value();
  sdk::IdempotencyOptions guard_options;
  guard_options.key_required = options_.key_required;
  guard_ = std::make_unique<sdk::IdempotencyGuard>(*keys_, clock_, guard_options);
  {
    Result<std::unique_ptr<sdk::BarrierTransaction>> tx = barrier_->Begin();
    REQUIRE(tx);
    REQUIRE(Exec(sdk::SqliteBarrierStore::Connection(**tx),
                 "CREATE TABLE orders (id INTEGER PRIMARY KEY, request TEXT NOT NULL)"));
    REQUIRE((*tx)->Commit().ok());
  }

  auto create = [this](const sdk::HttpRequest& request, sdk::BarrierTransaction& tx) {
    return CreateOrder(request, tx);
  };
  if (options_.guarded) {
    participant_.OnPost("/orders", guard_->Wrap(create));
  } else {
    participant_.OnPost("/orders", [this, create](const sdk::HttpRequest& request) {
      Result<std::unique_ptr<sdk::BarrierTransaction>> tx = barrier_->Begin();
      if (!tx) return sdk::HttpReply{503, R"({"message":"database"})"};
      sdk::HttpReply reply = create(request, **tx);
      if (reply.status < 500 && !(*tx)->Commit().ok()) {
        return sdk::HttpReply{503, R"({"message":"commit"})"};
      }
      return reply;
    });
  }
  participant_.OnGet("/orders/count", [this](const sdk::HttpRequest&) { return CountOrders(); });
  Result<int> port = participant_.Start("127.0.0.1", 0);
  REQUIRE(port);
  port_ = *port;
}

OrderEntryPoint::~OrderEntryPoint() { participant_.Stop(); }

std::string OrderEntryPoint::Url(const std::string& path) const {
  return "http://127.0.0.1:" + std::to_string(port_) + path;
}

sdk::HttpReply OrderEntryPoint::CreateOrder(const sdk::HttpRequest& request,
                                            sdk::BarrierTransaction& tx) {
  sqlite3* db = sdk::SqliteBarrierStore::Connection(tx);
  sqlite3_stmt* insert = nullptr;
  if (sqlite3_prepare_v2(db, "INSERT INTO orders (request) VALUES (?)", -1, &insert, nullptr) !=
      SQLITE_OK) {
    return {500, R"({"message":"prepare"})"};
  }
  sqlite3_bind_text(insert, 1, request.body.c_str(), static_cast<int>(request.body.size()),
                    SQLITE_TRANSIENT);
  const int rc = sqlite3_step(insert);
  sqlite3_finalize(insert);
  if (rc != SQLITE_DONE) return {500, R"({"message":"insert"})"};
  if (!options_.numbered_answers) return {201, R"({"status":"created"})"};
  const std::int64_t id = sqlite3_last_insert_rowid(db);
  return {201, R"({"order_id":)" + std::to_string(id) + "}"};
}

sdk::HttpReply OrderEntryPoint::CountOrders() {
  Result<std::unique_ptr<sdk::BarrierTransaction>> tx = barrier_->Begin();
  if (!tx) return {503, R"({"message":"database"})"};
  std::string count;
  if (!Exec(sdk::SqliteBarrierStore::Connection(**tx), "SELECT count(*) FROM orders", &count)) {
    return {500, R"({"message":"count"})"};
  }
  (*tx)->Rollback();
  return {200, R"({"orders":)" + count + "}"};
}

}  // namespace settle::testing
