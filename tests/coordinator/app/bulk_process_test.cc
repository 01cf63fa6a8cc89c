// A bulk action's job with real processes (docs/operations.md, "Bulk actions"): settled is
// killed (kill -9, every instance) while its job is part way through; restarted, the job goes
// on from its cursor, and in the end each matching transaction was paused exactly once, each
// pause audited with the job, and a transaction created after the job started was left alone.
// With PostgreSQL two instances share the database and both resume the job: each step is
// still taken once. The job is paced (--bulk-rate) so that the kill lands part way.
#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "eventually.h"
#include "json_client.h"
#include "participant_server.h"
#include "settled_instances.h"

namespace settle {
namespace {

using nlohmann::json;
using testing::JsonClient;
using testing::ParticipantServer;

constexpr const char* kClient = "client-token-of-the-shop-000";
constexpr const char* kAdmin = "admin-token-of-the-operators";
constexpr int kSagas = 120;

// Retried only an hour later: what the job pauses sits still meanwhile.
class BulkWorld {
 public:
  BulkWorld()
      : instances(std::string("client ") + kClient + " # shop\nadmin " + kAdmin + " # on-call\n",
                  {"--retry-interval", "3600s", "--retry-max", "3600s", "--bulk-rate", "40",
                   "--log-level", "warn"}) {
    participant.SetDefault("/action", {503, "ledger offline"});
    instances.Start();
  }

  void Submit(const std::string& gid) {
    const json saga = {{"gid", gid},
                       {"trans_type", "saga"},
                       {"steps", {{{"action", participant.Url("/action")}}}},
                       {"payloads", {"{}"}}};
    REQUIRE(As(kClient).PostJson("/api/settle/submit", saga).status == 200);
  }
  JsonClient As(const char* token) const { return instances.As(token); }
  json Job(const std::string& id) const {
    const auto answer = As(kAdmin).Get("/api/admin/jobs?id=" + id);
    REQUIRE(answer.status == 200);
    return answer.json["job"];
  }

  ParticipantServer participant;
  testing::SettledInstances instances;
};

TEST_CASE("a bulk job killed part way resumes after a restart and acts on each transaction once",
          "[process][bulk]") {
  BulkWorld w;
  for (int i = 0; i < kSagas; ++i) w.Submit("bulk-" + std::to_string(i));

  const json ask = {
      {"action", "pause"}, {"filter", {{"gid_prefix", "bulk-"}}}, {"reason", "ledger bug, OPS-12"}};
  const auto started = w.As(kAdmin).PostJson("/api/admin/bulk", ask);
  REQUIRE(started.status == 202);
  const std::string id = started.json["job"]["id"];
  REQUIRE(started.json["job"]["matched"] == kSagas);
  w.Submit("late-1");  // after the job started: not its

  // Part way (the pace makes it take three seconds): kill -9 every instance.
  REQUIRE(testing::Eventually([&] { return w.Job(id)["acted"].get<int>() >= 10; }));
  const int acted_before_kill = w.Job(id)["acted"].get<int>();
  w.instances.KillAll();
  CHECK(acted_before_kill < kSagas);
  w.instances.Start();
  json job;
  REQUIRE(testing::Eventually(
      [&] {
        job = w.Job(id);
        return job["state"] != "running";
      },
      std::chrono::seconds(60)));
  CHECK(job["state"] == "done");
  CHECK(job["acted"] == kSagas);
  CHECK(job["skipped"] == 0);

  // Each pause once, each audited with the job, in the same commit as the job's step.
  const auto audit = w.As(kAdmin).Get("/api/admin/audit?action=pause&limit=1000");
  REQUIRE(audit.status == 200);
  std::map<std::string, int> pauses;
  for (const json& e : audit.json["entries"]) {
    CHECK(e["parameters"]["job"] == id);
    ++pauses[e["gid"].get<std::string>()];
  }
  CHECK(pauses.size() == static_cast<std::size_t>(kSagas));
  for (const auto& [gid, count] : pauses) {
    INFO(gid);
    CHECK(count == 1);
  }
  const auto parked = w.As(kAdmin).Get("/api/settle/all?paused=true&limit=1000");
  CHECK(parked.json["transactions"].size() == static_cast<std::size_t>(kSagas));
  const auto late = w.As(kAdmin).Get("/api/settle/query?gid=late-1");
  CHECK_FALSE(late.json["transaction"].contains("paused"));
}

}  // namespace
}  // namespace settle
