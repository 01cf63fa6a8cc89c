// The database under a running settled crashes and comes back: settled keeps serving (503 for
// what needs the database, never a crash), stops calling participants once its lease can no
// longer be trusted, and without a restart of its own finishes every transaction it had
// acknowledged. A real PostgreSQL server of the test's own, stopped the way a crash stops it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <set>
#include <string>
#include <vector>

#include "branch_call_log.h"
#include "eventually.h"
#include "file_text.h"
#include "final_status.h"
#include "json_client.h"
#include "participant_server.h"
#include "private_postgres_server.h"
#include "settled_process.h"
#include "temp_dir.h"

namespace settle {
namespace {

using nlohmann::json;
using testing::JsonClient;
using testing::ParticipantServer;
using testing::ReceivedCall;
using Steady = std::chrono::steady_clock;

// What settled logs once its lease has run out: the outage lasts until then, so the instance
// must take its lease, and its transactions, up again afterwards.
constexpr const char* kLeaseLapsed = "lease lapsed";

json SagaBody(const ParticipantServer& p, const std::string& gid) {
  json steps = json::array();
  for (int i = 0; i < 2; ++i) {
    steps.push_back({{"action", p.Url("/action")}, {"compensate", p.Url("/compensate")}});
  }
  return {{"gid", gid}, {"trans_type", "saga"}, {"steps", steps}, {"payloads", {"{}", "{}"}}};
}

// Retries a submit that met the outage until the database answers again.
int SubmitUntilStored(JsonClient& c, const json& body, Steady::time_point deadline) {
  int status = 0;
  testing::Eventually(
      [&] {
        status = c.PostJson("/api/settle/submit", body).status;
        return status != 503;
      },
      std::chrono::ceil<std::chrono::milliseconds>(deadline - Steady::now()),
      std::chrono::milliseconds(50));
  return status;
}

TEST_CASE(
    "PostgreSQL crashes under a running settled and comes back: settled keeps serving "
    "and finishes every transaction it acknowledged",
    "[postgres][outage]") {
  testing::PrivatePostgresServer server;
  testing::TempDir dir;
  ParticipantServer p;
  // The sagas are still running when the database goes: their first actions are held.
  p.HoldAfter(0);
  testing::SettledProcess settled(
      server.conninfo(),
      {"--instance-id", "only", "--lease", "2s", "--lease-poll", "200ms", "--retry-interval",
       "100ms", "--retry-max", "500ms", "--log-level", "warn"},
      0, dir.File("settled.log"));
  JsonClient c(settled.port());

  std::vector<std::string> acknowledged;
  for (int i = 0; i < 40; ++i) {
    const std::string gid = "before-" + std::to_string(i);
    REQUIRE(c.PostJson("/api/settle/submit", SagaBody(p, gid)).status == 200);
    acknowledged.push_back(gid);
  }

  // The crash, while branch calls are still going on; their answers come once it is down.
  REQUIRE(p.WaitForHeld(1));
  server.Crash();
  const auto crashed_at = Steady::now();
  const std::size_t actions_before = p.Calls().size();
  INFO(actions_before << " of 80 actions called before the crash");
  REQUIRE(actions_before < 80);
  p.Release();

  // While it is down: settled answers, refuses what needs the database with 503, and stores
  // nothing it could not sync.
  std::vector<std::string> refused;
  for (int i = 0; i < 5; ++i) {
    const std::string gid = "during-" + std::to_string(i);
    const auto r = c.PostJson("/api/settle/submit", SagaBody(p, gid));
    INFO(r.body);
    CHECK(r.status == 503);
    refused.push_back(gid);
  }
  CHECK(c.Get("/api/settle/query?gid=before-0").status == 503);
  CHECK(c.Get("/api/ping").status == 200);
  REQUIRE(testing::WaitForFileToContain(settled.log_path(), kLeaseLapsed,
                                        Steady::now() + std::chrono::seconds(30)));
  CHECK(settled.process().running());

  const auto restarted_at = Steady::now();
  server.Restart();

  // The submits that met the outage go through once it is over, as a client's retry would.
  const auto deadline = Steady::now() + std::chrono::seconds(60);
  for (const std::string& gid : refused) {
    INFO(gid);
    CHECK(SubmitUntilStored(c, SagaBody(p, gid), deadline) == 200);
    acknowledged.push_back(gid);
  }

  // Every acknowledged transaction survived the crash and completes, without a restart of
  // settled.
  for (const std::string& gid : acknowledged) {
    INFO(gid);
    CHECK(testing::WaitForFinalStatus(c, gid, deadline) == "succeed");
  }

  // Each saw both its actions (some perhaps twice: a result lost with the crash is asked
  // again), never a compensation, and the calls of one branch never overlapped.
  const std::vector<ReceivedCall> calls = p.Calls();
  auto seen = testing::OpsByGid(calls);
  for (const std::string& gid : acknowledged) {
    INFO(gid);
    CHECK(seen[gid] == std::set<std::string>{"01:action", "02:action"});
  }
  CHECK(testing::OverlappingBranches(calls).empty());
  // Its lease was last renewed at most a poll before the crash, and counts as held until 2 s
  // after that, less a tenth: from then until the database is back, no participant is called.
  const auto lapsed_by = crashed_at + std::chrono::milliseconds(1900);
  const auto while_lapsed =
      std::count_if(calls.begin(), calls.end(), [&](const ReceivedCall& call) {
        return call.received_at > lapsed_by && call.received_at < restarted_at;
      });
  CHECK(while_lapsed == 0);
}

}  // namespace
}  // namespace settle
