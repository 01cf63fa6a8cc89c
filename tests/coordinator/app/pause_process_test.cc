// The settled binary's pause and resume (docs/operations.md, "Pause and resume") with real
// processes: a paused saga whose participant keeps failing is called no more, by the instance
// that paused it or (PostgreSQL) by another one driving it, and stays paused through kill -9 and
// a restart of every instance; resumed, it finishes. Each "no more calls" is judged once another
// saga, retried by the same instances at the same pace, has failed and been retried several
// times: the paused one would have been called meanwhile.
#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "eventually.h"
#include "final_status.h"
#include "json_client.h"
#include "participant_server.h"
#include "settled_instances.h"

namespace settle {
namespace {

using nlohmann::json;
using testing::JsonClient;
using testing::ParticipantServer;
using testing::ScriptedAnswer;
using Steady = std::chrono::steady_clock;

constexpr const char* kClient = "client-token-of-the-shop-000";
constexpr const char* kAdmin = "admin-token-of-the-operators";

constexpr int kInstances = testing::SettledInstances::kCount;

class PausedWorld {
 public:
  PausedWorld()
      : instances(std::string("client ") + kClient + " # shop\nadmin " + kAdmin + " # on-call\n",
                  {"--retry-interval", "50ms", "--retry-max", "50ms", "--circuit-failures", "0",
                   "--log-level", "warn"}) {
    participant.SetDefault("/action", {503, "ledger offline"});
    instances.Start();
  }

  JsonClient As(const char* token, int instance) const { return instances.As(token, instance); }
  void Submit(const std::string& gid, const std::string& path, int instance = 0) {
    const json saga = {{"gid", gid},
                       {"trans_type", "saga"},
                       {"steps", {{{"action", participant.Url(path)}}}},
                       {"payloads", {"{}"}}};
    REQUIRE(As(kClient, instance).PostJson("/api/settle/submit", saga).status == 200);
  }
  // The calls `path` received for `gid`.
  std::size_t CallsOf(const std::string& path, const std::string& gid) const {
    std::size_t n = 0;
    for (const auto& call : participant.CallsTo(path)) {
      auto it = call.query.find("gid");
      if (it != call.query.end() && it->second == gid) ++n;
    }
    return n;
  }
  // A saga to /marker that fails four times before it succeeds, retried every 50 ms by the
  // instances as the paused one would be: once it has finished, 200 ms of retries have gone by.
  void RunMarker(const std::string& gid) {
    std::vector<ScriptedAnswer> failures(4, ScriptedAnswer{503, "not yet"});
    participant.Script("/marker", failures);
    Submit(gid, "/marker", kInstances - 1);
    JsonClient reader = As(kAdmin, 0);
    REQUIRE(testing::WaitForFinalStatus(reader, gid, Steady::now() + std::chrono::seconds(30)) ==
            "succeed");
    REQUIRE(CallsOf("/marker", gid) == 5);
  }
  json Transaction(const std::string& gid) const {
    return As(kAdmin, 0).Get("/api/settle/query?gid=" + gid).json["transaction"];
  }

  ParticipantServer participant;
  testing::SettledInstances instances;
};

TEST_CASE("a paused saga is called no more, on every instance and after kill -9, until resumed",
          "[process][pause]") {
  PausedWorld w;
  w.Submit("order-1", "/action");
  REQUIRE(testing::Eventually([&] { return w.CallsOf("/action", "order-1") >= 3; }));

  // Paused through the last instance: with PostgreSQL, not the one that drives it.
  const auto paused = w.As(kAdmin, kInstances - 1)
                          .PostJson("/api/admin/pause", {{"gid", "order-1"}, {"reason", "OPS-9"}});
  REQUIRE(paused.status == 200);
  // A call already out when the pause was stored finishes: one more at most.
  const std::size_t calls = w.CallsOf("/action", "order-1");
  w.RunMarker("marker-1");
  const std::size_t settled_calls = w.CallsOf("/action", "order-1");
  CHECK(settled_calls <= calls + 1);
  CHECK(w.Transaction("order-1")["paused"]["reason"] == "OPS-9");

  // kill -9 and a restart of every instance: still paused, still not called.
  w.instances.KillAll();
  w.instances.Start();
  w.RunMarker("marker-2");
  CHECK(w.CallsOf("/action", "order-1") == settled_calls);
  const json after = w.Transaction("order-1");
  CHECK(after["status"] == "submitted");
  CHECK(after["paused"]["by"] == "on-call");

  // Resumed through the first instance, with the participant back: it finishes.
  w.participant.SetDefault("/action", ScriptedAnswer{});
  REQUIRE(w.As(kAdmin, 0)
              .PostJson("/api/admin/resume", {{"gid", "order-1"}, {"reason", "fixed"}})
              .status == 200);
  JsonClient reader = w.As(kAdmin, 0);
  CHECK(testing::WaitForFinalStatus(reader, "order-1", Steady::now() + std::chrono::seconds(30)) ==
        "succeed");
  CHECK(w.CallsOf("/action", "order-1") == settled_calls + 1);
}

}  // namespace
}  // namespace settle
