// Three settled instances on one PostgreSQL database, a client spreading its requests over
// them, and one instance killed with -9 in the middle: every transaction still completes, each
// branch took effect, and no two calls for one branch ever overlapped (the instance leases
// hand a transaction to another instance only after its driver's calls have ended).
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "branch_call_log.h"
#include "eventually.h"
#include "fault_proxy.h"
#include "final_status.h"
#include "json_client.h"
#include "metrics_sample.h"
#include "participant_server.h"
#include "postgres_test_database.h"
#include "settled_process.h"
#include "temp_dir.h"

namespace settle {
namespace {

using testing::SampleValue;

using nlohmann::json;
using testing::Fault;
using testing::FaultProxy;
using testing::JsonClient;
using testing::ParticipantServer;
using testing::ReceivedCall;
using testing::SettledProcess;
using Steady = std::chrono::steady_clock;

constexpr int kInstances = 3;

std::vector<std::string> InstanceArgs(int i) {
  return {"--instance-id",    "i" + std::to_string(i),
          "--lease",          "2s",
          "--lease-poll",     "200ms",
          "--retry-interval", "100ms",
          "--retry-max",      "500ms",
          "--log-level",      "warn"};
}

// Starts transactions, request by request over the live instances in turn: a TCC's prepare,
// registrations and submit usually reach three different instances.
class SpreadingClient {
 public:
  SpreadingClient(ParticipantServer& p, std::vector<std::unique_ptr<SettledProcess>>& instances)
      : p_(p), instances_(instances) {}

  void Saga(const std::string& gid) {
    json steps = json::array();
    for (int i = 0; i < 2; ++i) {
      steps.push_back({{"action", p_.Url("/action")}, {"compensate", p_.Url("/compensate")}});
    }
    Require(Next().PostJson(
        "/api/settle/submit",
        json{{"gid", gid}, {"trans_type", "saga"}, {"steps", steps}, {"payloads", {"{}", "{}"}}}));
    expected_[gid] = {"01:action", "02:action"};
  }

  void Tcc(const std::string& gid) {
    Require(Next().PostJson("/api/settle/prepare", json{{"gid", gid}, {"trans_type", "tcc"}}));
    for (const char* id : {"01", "02"}) {
      Require(Next().PostJson("/api/settle/registerBranch", json{{"gid", gid},
                                                                 {"trans_type", "tcc"},
                                                                 {"branch_id", id},
                                                                 {"data", "{}"},
                                                                 {"confirm", p_.Url("/confirm")},
                                                                 {"cancel", p_.Url("/cancel")}}));
    }
    Require(Next().PostJson("/api/settle/submit", json{{"gid", gid}, {"trans_type", "tcc"}}));
    expected_[gid] = {"01:confirm", "02:confirm"};
  }

  // The branch ops each transaction must have seen (and the only ones).
  const std::map<std::string, std::set<std::string>>& expected() const { return expected_; }

 private:
  JsonClient& Next() {
    for (;;) {
      const std::size_t i = next_++ % instances_.size();
      if (instances_[i] == nullptr) continue;  // killed
      auto found = clients_.find(i);
      if (found == clients_.end()) {
        found = clients_.emplace(i, JsonClient(instances_[i]->port())).first;
      }
      return found->second;
    }
  }
  static void Require(const testing::JsonResponse& r) {
    INFO(r.body);
    REQUIRE(r.status == 200);
  }

  ParticipantServer& p_;
  std::vector<std::unique_ptr<SettledProcess>>& instances_;
  std::map<std::size_t, JsonClient> clients_;
  std::size_t next_ = 0;
  std::map<std::string, std::set<std::string>> expected_;
};

TEST_CASE(
    "three instances on one database: one is killed mid-load, every transaction "
    "completes and no branch's calls overlap",
    "[postgres][instances]") {
  testing::PostgresTestDatabase database;
  testing::TempDir dir;
  ParticipantServer p;
  // After 20 calls, every call is held until i0 has been killed.
  p.HoldAfter(20);
  std::vector<std::unique_ptr<SettledProcess>> instances;
  for (int i = 0; i < kInstances; ++i) {
    instances.push_back(
        std::make_unique<SettledProcess>(database.conninfo(), InstanceArgs(i), 0,
                                         dir.File("settled-" + std::to_string(i) + ".log")));
  }
  SpreadingClient client(p, instances);

  // Load before the kill, and calls in flight at the moment of it.
  for (int i = 0; i < 30; ++i) {
    client.Saga("saga-" + std::to_string(i));
    client.Tcc("tcc-" + std::to_string(i));
  }
  REQUIRE(p.WaitForHeld(1, std::chrono::seconds(20)));
  WARN("killing instance i0 with " << p.Held() << " branch calls of all instances in flight");
  instances[0]->Kill();
  instances[0].reset();
  p.Release();

  // Load after the kill, on the two instances left.
  for (int i = 30; i < 45; ++i) {
    client.Saga("saga-" + std::to_string(i));
    client.Tcc("tcc-" + std::to_string(i));
  }

  // Every transaction completes, whichever instance had it (i0's after its lease ran out).
  JsonClient reader(instances[1]->port());
  const auto deadline = Steady::now() + std::chrono::seconds(60);
  for (const auto& [gid, ops] : client.expected()) {
    INFO(gid);
    CHECK(testing::WaitForFinalStatus(reader, gid, deadline) == "succeed");
  }

  // Each branch saw exactly its ops, and never two calls at once.
  const std::vector<ReceivedCall> calls = p.Calls();
  auto seen = testing::OpsByGid(calls);
  for (const auto& [gid, ops] : client.expected()) {
    INFO(gid);
    CHECK(seen[gid] == ops);
  }
  const std::vector<std::string> overlapping = testing::OverlappingBranches(calls);
  INFO("branches called again before an earlier call was answered: " << overlapping.size());
  for (const std::string& branch : overlapping) UNSCOPED_INFO(branch);
  CHECK(overlapping.empty());
}

TEST_CASE(
    "two instances on one database keep their own circuits for a participant host that is "
    "down, and finish every saga once it is back",
    "[postgres][instances][circuit]") {
  testing::PostgresTestDatabase database;
  testing::TempDir dir;
  ParticipantServer participant;
  FaultProxy down(participant.port());
  down.AddRule({"/action", Fault::kDropRequest, 0, -1});
  const std::string host = "http://127.0.0.1:" + std::to_string(down.port());
  std::vector<std::unique_ptr<SettledProcess>> instances;
  for (int i = 0; i < 2; ++i) {
    std::vector<std::string> args = InstanceArgs(i);
    for (const char* arg : {"--circuit-failures", "3", "--circuit-probe-max", "300ms"}) {
      args.push_back(arg);
    }
    instances.push_back(std::make_unique<SettledProcess>(
        database.conninfo(), args, 0, dir.File("settled-" + std::to_string(i) + ".log")));
  }
  // Each instance creates, and so drives, half of the sagas.
  constexpr int kSagas = 20;
  for (int i = 0; i < kSagas; ++i) {
    JsonClient client(instances[i % 2]->port());
    const json saga = {{"gid", "down-" + std::to_string(i)},
                       {"trans_type", "saga"},
                       {"steps", {{{"action", down.Url("/action")}}}},
                       {"payloads", {"{}"}}};
    REQUIRE(client.PostJson("/api/settle/submit", saga).status == 200);
  }
  // Each instance opens its own circuit for the host from its own failures.
  const std::string opens = "settle_circuit_opens_total{host=\"" + host + "\"}";
  for (auto& instance : instances) {
    JsonClient metrics(instance->port());
    CHECK(testing::Eventually(
        [&] { return SampleValue(metrics.Get("/api/metrics").body, opens) >= 1; },
        std::chrono::seconds(20), std::chrono::milliseconds(20)));
  }
  // Nothing finished or failed meanwhile.
  JsonClient reader(instances[0]->port());
  for (int i = 0; i < kSagas; ++i) {
    const json q = reader.Get("/api/settle/query?gid=down-" + std::to_string(i)).json;
    CHECK(q["transaction"]["status"] == "submitted");
  }

  down.ClearRules();
  const auto deadline = Steady::now() + std::chrono::seconds(60);
  for (int i = 0; i < kSagas; ++i) {
    const std::string gid = "down-" + std::to_string(i);
    INFO(gid);
    CHECK(testing::WaitForFinalStatus(reader, gid, deadline) == "succeed");
  }
  CHECK(participant.CountCalls("/action") >= kSagas);
}

}  // namespace
}  // namespace settle
