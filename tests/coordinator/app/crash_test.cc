// kill -9 of a real settled process while branch calls are in flight, then a restart on the
// same database file: every transaction finishes, and the participants saw exactly the
// branch operations the coordinator meant, none missing.
#include <catch2/catch.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "final_status.h"
#include "json_client.h"
#ifdef SETTLE_TEST_STORE_POSTGRES
#include "postgres_test_database.h"
#endif
#include "participant_server.h"
#include "settled_process.h"
#include "temp_dir.h"

namespace settle {
namespace {

using nlohmann::json;
using testing::JsonClient;
using testing::ParticipantServer;
using testing::ReceivedCall;
using testing::SettledProcess;
using OpSet = std::set<std::string>;  // "01:confirm"

struct Expected {
  std::string status;
  OpSet ops;  // every op the participants must have seen, and the only ones
};

class Workload {
 public:
  explicit Workload(ParticipantServer& p) : p_(p) {
    p.SetDefault("/refuse", {409, R"({"dtm_result":"FAILURE"})"});
  }

  void StartAll(JsonClient& c) {
    for (int i = 0; i < 25; ++i) CommitTcc(c, "tcc-commit-" + std::to_string(i));
    for (int i = 0; i < 10; ++i) AbortTcc(c, "tcc-abort-" + std::to_string(i));
    for (int i = 0; i < 25; ++i) Saga(c, "saga-ok-" + std::to_string(i), false);
    for (int i = 0; i < 10; ++i) Saga(c, "saga-fail-" + std::to_string(i), true);
  }

  const std::map<std::string, Expected>& expected() const { return expected_; }

 private:
  void Register(JsonClient& c, const std::string& gid, const std::string& id) {
    REQUIRE(c.PostJson("/api/settle/registerBranch", json{{"gid", gid},
                                                          {"trans_type", "tcc"},
                                                          {"branch_id", id},
                                                          {"data", R"({"amount":1})"},
                                                          {"confirm", p_.Url("/confirm")},
                                                          {"cancel", p_.Url("/cancel")}})
                .status == 200);
  }
  void CommitTcc(JsonClient& c, const std::string& gid) {
    REQUIRE(c.PostJson("/api/settle/prepare", json{{"gid", gid}, {"trans_type", "tcc"}}).status ==
            200);
    Register(c, gid, "01");
    Register(c, gid, "02");
    REQUIRE(c.PostJson("/api/settle/submit", json{{"gid", gid}, {"trans_type", "tcc"}}).status ==
            200);
    expected_[gid] = {"succeed", {"01:confirm", "02:confirm"}};
  }
  void AbortTcc(JsonClient& c, const std::string& gid) {
    REQUIRE(c.PostJson("/api/settle/prepare", json{{"gid", gid}, {"trans_type", "tcc"}}).status ==
            200);
    Register(c, gid, "01");
    Register(c, gid, "02");
    REQUIRE(c.PostJson("/api/settle/abort", json{{"gid", gid}, {"trans_type", "tcc"}}).status ==
            200);
    expected_[gid] = {"failed", {"01:cancel", "02:cancel"}};
  }
  void Saga(JsonClient& c, const std::string& gid, bool fail_second_step) {
    json steps = json::array();
    for (int i = 0; i < 3; ++i) {
      const bool refuse = fail_second_step && i == 1;
      steps.push_back({{"action", p_.Url(refuse ? "/refuse" : "/action")},
                       {"compensate", p_.Url("/compensate")}});
    }
    REQUIRE(c.PostJson("/api/settle/submit", json{{"gid", gid},
                                                  {"trans_type", "saga"},
                                                  {"steps", steps},
                                                  {"payloads", {"{}", "{}", "{}"}}})
                .status == 200);
    expected_[gid] =
        fail_second_step
            ? Expected{"failed", {"01:action", "02:action", "02:compensate", "01:compensate"}}
            : Expected{"succeed", {"01:action", "02:action", "03:action"}};
  }

  ParticipantServer& p_;
  std::map<std::string, Expected> expected_;
};

TEST_CASE("settled killed mid-flight and restarted finishes every transaction exactly as meant",
          "[crash]") {
  testing::TempDir dir;
#ifdef SETTLE_TEST_STORE_POSTGRES
  // The same crashes with the transactions in PostgreSQL (settled_postgres_process_tests).
  testing::PostgresTestDatabase database;
  const std::string db = database.conninfo();
#else
  const std::string db = dir.File("settle.db");
#endif
  const std::string log = dir.File("settled.log");
  const std::vector<std::string> args = {"--retry-interval", "100ms", "--retry-max", "500ms",
                                         "--log-level",      "warn"};
  ParticipantServer p;
  Workload work(p);
  p.HoldAfter(40);
  auto settled = std::make_unique<SettledProcess>(db, args, 0, log);
  {
    JsonClient client(settled->port());
    work.StartAll(client);
  }

  // Two kills, each after 40 more calls and while the calls after those are held in flight,
  // each followed by a restart. The 185 calls the workload needs leave enough for both.
  for (std::size_t round = 1; round <= 2; ++round) {
    REQUIRE(p.WaitForHeld(1, std::chrono::seconds(30)));
    settled->Kill();
    WARN("kill " << round << ": " << p.Held() << " branch calls in flight");
    p.Release();  // their answers go to a coordinator that is gone
    if (round == 1) p.HoldAfter(p.Calls().size() + 40);
    settled = std::make_unique<SettledProcess>(db, args, 0, log);
  }

  JsonClient client(settled->port());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (const auto& [gid, expected] : work.expected()) {
    INFO(gid);
    CHECK(testing::WaitForFinalStatus(client, gid, deadline) == expected.status);
  }

  std::map<std::string, OpSet> seen;
  std::map<std::string, std::map<std::string, ReceivedCall>> first_call;  // gid -> op -> call
  for (const ReceivedCall& call : p.Calls()) {
    const std::string gid = call.query.at("gid");
    const std::string op = call.query.at("branch_id") + ":" + call.query.at("op");
    seen[gid].insert(op);
    first_call[gid].emplace(op, call);
  }
  for (const auto& [gid, expected] : work.expected()) {
    INFO(gid);
    CHECK(seen[gid] == expected.ops);
  }
  // A saga's step starts only after the previous one answered (as stored before the crash).
  for (const auto& [gid, calls] : first_call) {
    if (gid.rfind("saga-ok-", 0) != 0) continue;
    INFO(gid);
    CHECK(calls.at("01:action").answered_at <= calls.at("02:action").received_at);
    CHECK(calls.at("02:action").answered_at <= calls.at("03:action").received_at);
  }
}

}  // namespace
}  // namespace settle
