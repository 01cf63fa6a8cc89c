// The same team's service over gRPC, built against an installed Settle: the saga step
// "Reserve" (compensated by "Release") as gRPC methods behind the barrier in the service's
// SQLite file, and a saga submitted over the coordinator's gRPC API with the step's bytes as
// the message. Exits 0 when the saga succeeded and the reservation was made exactly once.
// Usage: stock-grpc COORDINATOR_GRPC DATABASE   (COORDINATOR_GRPC: grpc://host:port)
#include <cstdio>
#include <string>

#include "settle/sdk/barrier.h"
#include "settle/sdk/grpc_branch_server.h"
#include "settle/sdk/grpc_client.h"
#include "settle/sdk/saga.h"
#include "settle/sdk/sqlite_barrier_store.h"

using namespace settle;
using namespace settle::sdk;

namespace {

Status Exec(BarrierTransaction& tx, const char* sql) {
  char* error = nullptr;
  if (sqlite3_exec(SqliteBarrierStore::Connection(tx), sql, nullptr, nullptr, &error) ==
      SQLITE_OK) {
    return Status::Ok();
  }
  Status failed = Status::Unavailable(error == nullptr ? "sqlite failed" : error);
  sqlite3_free(error);
  return failed;
}

int Fail(const char* what, const Status& status) {
  std::fprintf(stderr, "stock-grpc: %s: %s\n", what, status.ToString().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s COORDINATOR_GRPC DATABASE\n", argv[0]);
    return 2;
  }
  SystemClock clock;
  auto store = SqliteBarrierStore::Open(argv[2]);
  if (!store) return Fail("opening the database", store.status());
  {
    auto tx = (*store)->Begin();
    if (!tx) return Fail("setting up", tx.status());
    Status s = Exec(**tx,
                    "CREATE TABLE IF NOT EXISTS stock (reserved INTEGER NOT NULL);"
                    "INSERT INTO stock SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM stock)");
    if (s.ok()) s = (*tx)->Commit();
    if (!s.ok()) return Fail("setting up", s);
  }

  Barrier barrier(**store, clock);
  GrpcBranchServer branches;
  branches
      .OnAction("/stock.Stock/Reserve",
                Guarded(barrier,
                        [](const BranchRequest&, BarrierTransaction& tx) {
                          return Exec(tx, "UPDATE stock SET reserved = reserved + 1");
                        }))
      .OnCompensate("/stock.Stock/Release",
                    Guarded(barrier, [](const BranchRequest&, BarrierTransaction& tx) {
                      return Exec(tx, "UPDATE stock SET reserved = reserved - 1");
                    }));
  auto port = branches.Start("127.0.0.1", 0);
  if (!port) return Fail("starting the gRPC branches", port.status());
  const std::string base = "grpc://127.0.0.1:" + std::to_string(*port) + "/stock.Stock";

  auto client = GrpcClient::Create(argv[1]);
  if (!client) return Fail("the coordinator's address", client.status());
  auto gid = (*client)->NewGid();
  if (!gid) return Fail("asking for a gid", gid.status());
  Saga saga(**client, *gid);
  saga.Add(base + "/Reserve", base + "/Release", std::string("\x0a\x06widget", 8));
  saga.options().wait_result = true;
  auto outcome = saga.Submit();
  if (!outcome) return Fail("submitting the saga", outcome.status());

  sqlite3_int64 reserved = -1;
  {
    auto tx = (*store)->Begin();
    if (!tx) return Fail("reading the stock", tx.status());
    sqlite3_stmt* stmt = nullptr;
    sqlite3_prepare_v2(SqliteBarrierStore::Connection(**tx), "SELECT reserved FROM stock", -1,
                       &stmt, nullptr);
    if (sqlite3_step(stmt) == SQLITE_ROW) reserved = sqlite3_column_int64(stmt, 0);
    sqlite3_finalize(stmt);
  }
  branches.Stop();
  std::printf("saga %s over gRPC: %s, reserved %lld\n", gid->c_str(),
              std::string(ToString(outcome->status)).c_str(), static_cast<long long>(reserved));
  return outcome->status == GlobalStatus::kSucceed && reserved == 1 ? 0 : 1;
}
