// The settled binary's Retry now while a participant host's circuit is open: a transaction's
// Retry now (resetNextCronTime) and a host's (POST /api/admin/hosts/retryNow) call the host at
// once, long before the circuit's own probe, and what /query and the hosts view say meanwhile.
#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <memory>
#include <string>

#include "eventually.h"
#include "file_text.h"
#include "json_client.h"
#include "participant_server.h"
#include "settled_process.h"
#include "temp_dir.h"

namespace settle {
namespace {

using nlohmann::json;
using std::chrono::seconds;
using std::chrono::steady_clock;
using testing::JsonClient;
using testing::ParticipantServer;
using testing::ScriptedAnswer;
using testing::SettledProcess;

constexpr const char* kClient = "client-token-of-the-shop";
constexpr const char* kRead = "read-token-of-the-operators";
constexpr const char* kAdmin = "admin-token-of-the-operators";

// A participant whose /action answers 503 (its host is down, for the circuit) until Back().
struct Participant {
  Participant() { server.SetDefault("/action", {503, "down for maintenance"}); }
  void Back() { server.SetDefault("/action", ScriptedAnswer{}); }
  // The calls of `gid`'s action the participant received.
  std::size_t CallsOf(const std::string& gid) const {
    std::size_t n = 0;
    for (const auto& call : server.CallsTo("/action")) {
      auto it = call.query.find("gid");
      if (it != call.query.end() && it->second == gid) ++n;
    }
    return n;
  }
  ParticipantServer server;
};

// A settled whose circuits open after two failures and wait a minute before their first probe,
// so that nothing but a Retry now calls the host within these tests.
struct World {
  World() {
    std::ofstream(tokens) << "client " << kClient << " # shop\n"
                          << "read " << kRead << " # operators-read\n"
                          << "admin " << kAdmin << " # operators\n";
    settled = std::make_unique<SettledProcess>(
        dir.File("settle.db"),
        std::vector<std::string>{"--token-file", tokens, "--retry-interval", "50ms", "--retry-max",
                                 "100ms", "--circuit-failures", "2", "--circuit-probe-first", "60s",
                                 "--circuit-probe-max", "60s"});
    client = As(kClient);
    read = As(kRead);
    admin = As(kAdmin);
  }
  std::unique_ptr<JsonClient> As(const char* token) const {
    auto c = std::make_unique<JsonClient>(settled->port());
    c->SetHeader("Authorization", std::string("Bearer ") + token);
    return c;
  }
  void Submit(const std::string& gid) {
    const json saga = {{"gid", gid},
                       {"trans_type", "saga"},
                       {"steps", {{{"action", participant.server.Url("/action")}}}},
                       {"payloads", {"{}"}}};
    REQUIRE(client->PostJson("/api/settle/submit", saga).status == 200);
  }
  json Transaction(const std::string& gid) const {
    return read->Get("/api/settle/query?gid=" + gid).json["transaction"];
  }
  // Opens the host's circuit with s1's two failures, then holds s2 behind it.
  void OpenCircuit() {
    Submit("s1");
    REQUIRE(testing::WaitForFileToContain(settled->log_path(), "circuit for " + host + " open",
                                          steady_clock::now() + seconds(10)));
    Submit("s2");
    REQUIRE(testing::Eventually([&] { return Transaction("s2").contains("waiting_on_host"); },
                                seconds(10)));
    CHECK(participant.CallsOf("s2") == 0);
  }
  bool Succeeds(const std::string& gid, std::chrono::seconds within) const {
    return testing::Eventually([&] { return Transaction(gid)["status"] == "succeed"; }, within,
                               std::chrono::milliseconds(20));
  }

  testing::TempDir dir;
  const std::string tokens = dir.File("tokens");
  Participant participant;
  const std::string host = "http://127.0.0.1:" + std::to_string(participant.server.port());
  std::unique_ptr<SettledProcess> settled;
  std::unique_ptr<JsonClient> client, read, admin;
};

TEST_CASE(
    "retry now of a transaction held behind an open circuit calls its participant at once, long "
    "before the circuit's probe, and the saga finishes",
    "[process][circuit][retry-now]") {
  World w;
  w.OpenCircuit();
  // Held: it says what it waits for, and when the host is next tried (the probe, a minute on).
  const json held = w.Transaction("s2")["waiting_on_host"];
  CHECK(held["host"] == w.host);
  CHECK(held["circuit"] == "open");
  CHECK(held["reason"] == "circuit_open");
  CHECK(held["next_try_at"].is_string());
  CHECK(held["next_try_at"] > w.Transaction("s2")["update_time"]);
  CHECK(w.read->Get("/api/settle/all").body.find("waiting_on_host") != std::string::npos);

  w.participant.Back();
  const json retry = {{"gid", "s2"}};
  CHECK(w.read->PostJson("/api/dtmsvr/resetNextCronTime", retry).status == 403);
  CHECK(w.client->PostJson("/api/dtmsvr/resetNextCronTime", retry).status == 403);
  CHECK(w.participant.CallsOf("s2") == 0);
  const auto asked = steady_clock::now();
  REQUIRE(w.admin->PostJson("/api/dtmsvr/resetNextCronTime", retry).status == 200);
  // The circuit's own probe is a minute away: only the retry now can have called.
  REQUIRE(w.Succeeds("s2", seconds(10)));
  CHECK(steady_clock::now() - asked < seconds(30));
  CHECK(w.participant.CallsOf("s2") == 1);
  CHECK_FALSE(w.Transaction("s2").contains("waiting_on_host"));
  // Its answer closed the circuit: the transaction that opened it is released and finishes.
  REQUIRE(w.Succeeds("s1", seconds(10)));
  CHECK(testing::WaitForFileToContain(w.settled->log_path(), "circuit for " + w.host + " closed",
                                      steady_clock::now() + seconds(5)));
}

TEST_CASE(
    "retry now of a transaction whose host is still down calls once and leaves the circuit open, "
    "its probe where it was",
    "[process][circuit][retry-now]") {
  World w;
  w.OpenCircuit();
  const json before = w.Transaction("s2")["waiting_on_host"];
  REQUIRE(w.admin->PostJson("/api/dtmsvr/resetNextCronTime", json{{"gid", "s2"}}).status == 200);
  REQUIRE(testing::Eventually([&] { return w.participant.CallsOf("s2") == 1; }, seconds(10)));
  REQUIRE(testing::WaitForFileToContain(
      w.settled->log_path(), "circuit for " + w.host + " stays open: the retry now of gid=s2",
      steady_clock::now() + seconds(10)));
  // Held again behind the circuit, whose probe has not moved; no other call went out.
  REQUIRE(testing::Eventually([&] { return w.Transaction("s2").contains("waiting_on_host"); },
                              seconds(10)));
  const json after = w.Transaction("s2")["waiting_on_host"];
  CHECK(after["circuit"] == "open");
  CHECK(after["next_try_at"] == before["next_try_at"]);
  CHECK(w.participant.CallsOf("s2") == 1);
  CHECK(w.Transaction("s2")["status"] == "submitted");
}

TEST_CASE(
    "retry now of a host calls its oldest waiting transaction at once, read and client tokens "
    "are refused and bad input is named",
    "[process][circuit][retry-now]") {
  World w;
  w.OpenCircuit();
  const std::string path = "/api/admin/hosts/retryNow";
  const json body = {{"host", w.host}};
  CHECK(w.read->PostJson(path, body).status == 403);
  CHECK(w.client->PostJson(path, body).status == 403);
  for (const json& bad :
       {json::object(), json{{"host", ""}}, json{{"host", 5}}, json{{"host", "not a url"}}}) {
    const auto refused = w.admin->PostJson(path, bad);
    INFO(bad.dump());
    CHECK(refused.status == 400);
    CHECK_THAT(refused.json["message"].get<std::string>(), Catch::StartsWith("host"));
  }
  const auto unknown_member = w.admin->PostJson(path, json{{"host", w.host}, {"gid", "s1"}});
  CHECK(unknown_member.status == 400);
  CHECK_THAT(unknown_member.json["message"].get<std::string>(), Catch::StartsWith("gid"));
  CHECK(w.admin->PostJson(path, json{{"host", "http://127.0.0.1:1"}}).status == 404);
  CHECK(w.participant.CallsOf("s1") == 2);  // the two failures that opened the circuit

  // A force-stopped transaction waits for no host from the moment it is stopped.
  w.Submit("s3");
  REQUIRE(testing::Eventually([&] { return w.Transaction("s3").contains("waiting_on_host"); },
                              seconds(10)));
  REQUIRE(w.admin->PostJson("/api/dtmsvr/forceStop", json{{"gid", "s3"}}).status == 200);
  const json hosts = w.read->Get("/api/admin/hosts").json["hosts"];
  REQUIRE(hosts.size() == 1);
  CHECK(hosts[0]["waiting"] == 2);
  CHECK(hosts[0]["oldest_waiting"] == json{"s1", "s2"});

  // The participant is back: a retry of the host (given as a branch URL on it) calls its oldest
  // waiting transaction, whose answer closes the circuit and releases the rest.
  w.participant.Back();
  const auto asked = steady_clock::now();
  const auto probed = w.admin->PostJson(path, json{{"host", w.host + "/action?x=1"}});
  REQUIRE(probed.status == 200);
  CHECK(probed.json["host"] == w.host);
  CHECK(probed.json["gid"] == "s1");
  REQUIRE(w.Succeeds("s1", seconds(10)));
  REQUIRE(w.Succeeds("s2", seconds(10)));
  CHECK(steady_clock::now() - asked < seconds(30));
  CHECK(w.participant.CallsOf("s1") == 3);
  CHECK(w.participant.CallsOf("s2") == 1);
  CHECK(w.participant.CallsOf("s3") == 0);
  CHECK(w.Transaction("s3")["status"] == "failed");
  // Nothing waits for the host any more: a retry of it has nothing to call.
  CHECK(w.admin->PostJson(path, body).status == 409);
}

}  // namespace
}  // namespace settle
