// A TCC participant in a few dozen lines: an account whose Try reserves, Confirm spends and
// Cancel releases, each guarded by the barrier in the participant's own SQLite file.
// Usage: sdk-tcc-participant [PORT] [DATABASE]; calls carry {"amount": N}.
#include <nlohmann/json.hpp>

#include <cstdio>
#include <string>

#include "settle/core/stop_signals.h"
#include "settle/sdk/participant.h"
#include "settle/sdk/sqlite_barrier_store.h"

using namespace settle;
using namespace settle::sdk;

// Business code: runs `sql` with the call's amount as ?1 in the barrier's local transaction.
GuardedBusiness Run(const char* sql) {
  return [sql](const BranchRequest& request, BarrierTransaction& tx) -> Status {
    const auto body = nlohmann::json::parse(request.body, nullptr, false);
    if (!body.is_object() || !body["amount"].is_number_integer() || body["amount"] <= 0) {
      return Status::InvalidArgument("amount: must be a positive integer");
    }
    sqlite3* db = SqliteBarrierStore::Connection(tx);
    sqlite3_stmt* stmt = nullptr;
    sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr);
    sqlite3_bind_int64(stmt, 1, body["amount"].get<std::int64_t>());
    const int rc = sqlite3_step(stmt);
    sqlite3_finalize(stmt);
    if (rc != SQLITE_DONE) return Status::Unavailable(sqlite3_errmsg(db));        // 503: retried
    if (sqlite3_changes(db) == 0) return Status::Conflict("insufficient funds");  // 409
    return Status::Ok();
  };
}

int main(int argc, char** argv) {
  const std::string port_text = argc > 1 ? argv[1] : "8081";
  if (port_text.empty() || port_text.find_first_not_of("0123456789") != std::string::npos) {
    const bool help = port_text == "--help";
    std::fprintf(help ? stdout : stderr, "usage: %s [PORT] [DATABASE]\n", argv[0]);
    return help ? 0 : 2;
  }
  BlockStopSignals();  // before any thread starts; awaited at the end

  SystemClock clock;
  auto store = SqliteBarrierStore::Open(argc > 2 ? argv[2] : "./tcc-participant.db");
  if (!store) return std::fprintf(stderr, "%s\n", store.status().ToString().c_str()), 1;
  auto setup = (*store)->Begin();  // the business table lives next to the barrier table
  sqlite3_exec(SqliteBarrierStore::Connection(**setup),
               "CREATE TABLE IF NOT EXISTS account (balance INTEGER, frozen INTEGER);"
               "INSERT INTO account SELECT 10000, 0 WHERE NOT EXISTS (SELECT 1 FROM account);",
               nullptr, nullptr, nullptr);
  if (!(*setup)->Commit().ok()) return 1;

  Barrier barrier(**store, clock);
  Participant participant;
  participant
      .OnTry("/api/TransOutTry", Guarded(barrier, Run("UPDATE account SET balance = balance - ?1,"
                                                      " frozen = frozen + ?1 WHERE balance >= ?1")))
      .OnConfirm("/api/TransOutConfirm",
                 Guarded(barrier, Run("UPDATE account SET frozen = frozen - ?1")))
      .OnCancel("/api/TransOutCancel", Guarded(barrier, Run("UPDATE account SET balance = "
                                                            "balance + ?1, frozen = frozen - ?1")));
  auto port = participant.Start("127.0.0.1", std::stoi(port_text.substr(0, 5)));
  if (!port) return std::fprintf(stderr, "%s\n", port.status().ToString().c_str()), 1;
  std::printf("tcc-participant listening on http://127.0.0.1:%d\n", *port);
  std::fflush(stdout);
  WaitForStopSignal();
}
