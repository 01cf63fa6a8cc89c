// A team's own service, built against an installed Settle: a saga step "reserve" (compensated
// by "release") behind the barrier in the service's SQLite file, and a saga that it submits to
// the coordinator and waits for. Exits 0 when the saga succeeded and the reservation was made
// exactly once.
// Usage: stock-service COORDINATOR_API DATABASE
#include <cstdio>
#include <string>

#include "settle/sdk/barrier.h"
#include "settle/sdk/participant.h"
#include "settle/sdk/saga.h"
#include "settle/sdk/sqlite_barrier_store.h"
#include "settle/sdk/workflow.h"
#include "stock_db.h"

using namespace settle;
using namespace settle::sdk;

int Fail(const char* what, const Status& status) {
  return stock::Fail("stock-service", what, status);
}

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s COORDINATOR_API DATABASE\n", argv[0]);
    return 2;
  }
  SystemClock clock;
  auto store = SqliteBarrierStore::Open(argv[2]);
  if (!store) return Fail("opening the database", store.status());
  if (Status s = stock::Create(**store); !s.ok()) return Fail("setting up", s);

  Barrier barrier(**store, clock);
  Participant participant;
  participant.OnAction("/api/Reserve", Guarded(barrier, stock::Reserve))
      .OnCompensate("/api/Release", Guarded(barrier, stock::Release));
  auto port = participant.Start("127.0.0.1", 0);
  if (!port) return Fail("starting the participant", port.status());
  const std::string base = "http://127.0.0.1:" + std::to_string(*port) + "/api";

  auto client = Client::Create(argv[1]);
  if (!client) return Fail("the coordinator's URL", client.status());
  // A workflow registered beside the saga: the workflow room's headers and library are there.
  Workflows workflows(**client, {});
  if (Status s = workflows.Register(
          "restock",
          [](Workflow&, std::string input) -> asio::awaitable<Result<std::string>> {
            co_return input;
          });
      !s.ok()) {
    return Fail("registering a workflow", s);
  }
  auto gid = (*client)->NewGid();
  if (!gid) return Fail("asking for a gid", gid.status());
  Saga saga(**client, *gid);
  saga.Add(base + "/Reserve", base + "/Release", R"({"sku":"widget"})");
  saga.options().wait_result = true;
  auto outcome = saga.Submit();
  if (!outcome) return Fail("submitting the saga", outcome.status());

  const sqlite3_int64 reserved = stock::Reserved(**store);
  participant.Stop();
  std::printf("saga %s: %s, reserved %lld\n", gid->c_str(),
              std::string(ToString(outcome->status)).c_str(), static_cast<long long>(reserved));
  return outcome->status == GlobalStatus::kSucceed && reserved == 1 ? 0 : 1;
}
