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
#include "stock_db.h"

using namespace settle;
using namespace settle::sdk;

int Fail(const char* what, const Status& status) { return stock::Fail("stock-grpc", what, status); }

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s COORDINATOR_GRPC DATABASE\n", argv[0]);
    return 2;
  }
  SystemClock clock;
  auto store = SqliteBarrierStore::Open(argv[2]);
  if (!store) return Fail("opening the database", store.status());
  if (Status s = stock::Create(**store); !s.ok()) return Fail("setting up", s);

  Barrier barrier(**store, clock);
  GrpcBranchServer branches;
  branches.OnAction("/stock.Stock/Reserve", Guarded(barrier, stock::Reserve))
      .OnCompensate("/stock.Stock/Release", Guarded(barrier, stock::Release));
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

  const sqlite3_int64 reserved = stock::Reserved(**store);
  branches.Stop();
  std::printf("saga %s over gRPC: %s, reserved %lld\n", gid->c_str(),
              std::string(ToString(outcome->status)).c_str(), static_cast<long long>(reserved));
  return outcome->status == GlobalStatus::kSucceed && reserved == 1 ? 0 : 1;
}
