// Issue 43's attack 7 and 5 against a real settled with a token file naming two client tokens
// (service-a, service-b), a read token and an admin token: a transaction and a topic belong to
// the caller that created them, and a caller's unfinished transactions are bounded by quotas.
#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "eventually.h"
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
using testing::Eventually;
using testing::JsonClient;
using testing::JsonResponse;
using testing::ParticipantServer;
using testing::SettledProcess;

constexpr const char* kTokenA = "client-token-of-service-a";
constexpr const char* kTokenB = "client-token-of-service-b";
constexpr const char* kTokenRead = "read-token-of-the-operators";
constexpr const char* kTokenAdmin = "admin-token-of-the-operators";
// What service A's prepare asks settled to send to its participants, and nobody else.
constexpr const char* kSecret = "Bearer SECRET-OF-SERVICE-A";

// The store, the token file and a place for logs.
struct World {
  World() {
    std::ofstream(tokens) << "client " << kTokenA << " # service-a\n"
                          << "client " << kTokenB << " # service-b\n"
                          << "read " << kTokenRead << " # operators-read\n"
                          << "admin " << kTokenAdmin << " # operators\n";
  }
  std::vector<std::string> Args(std::vector<std::string> more = {}) const {
    std::vector<std::string> args = {"--token-file", tokens,  "--retry-interval", "100ms",
                                     "--retry-max",  "500ms", "--log-level",      "warn"};
    args.insert(args.end(), more.begin(), more.end());
    return args;
  }
  std::unique_ptr<SettledProcess> Start(std::vector<std::string> more = {}) const {
    return std::make_unique<SettledProcess>(db, Args(std::move(more)), 0, log);
  }

  testing::TempDir dir;
#ifdef SETTLE_TEST_STORE_POSTGRES
  testing::PostgresTestDatabase database;
  const std::string db = database.conninfo();
#else
  const std::string db = dir.File("settle.db");
#endif
  const std::string tokens = dir.File("tokens");
  const std::string log = dir.File("settled.log");
};

std::unique_ptr<JsonClient> As(int port, const char* token) {
  auto client = std::make_unique<JsonClient>(port);
  client->SetHeader("Authorization", std::string("Bearer ") + token);
  return client;
}

// What `client` gets for `call` on gid `taken`, with the gid's name replaced by `absent`'s (of
// the same length), against what it gets for `absent`, which no transaction has: a refusal that
// says nothing of the gid is the same bytes.
void CheckAnsweredAsAbsent(const std::function<JsonResponse(const std::string& gid)>& call,
                           const std::string& taken, const std::string& absent) {
  REQUIRE(taken.size() == absent.size());
  const JsonResponse on_taken = call(taken);
  const JsonResponse on_absent = call(absent);
  std::string seen = on_taken.body;
  for (std::size_t at = seen.find(taken); at != std::string::npos; at = seen.find(taken, at)) {
    seen.replace(at, taken.size(), absent);
  }
  CHECK(on_taken.status == on_absent.status);
  CHECK(seen == on_absent.body);
  CHECK(on_taken.body.find("SECRET") == std::string::npos);
}

bool Lists(JsonClient& client, const std::string& gid) {
  const JsonResponse all = client.Get("/api/settle/all?limit=1000");
  REQUIRE(all.status == 200);
  for (const json& tx : all.json["transactions"]) {
    if (tx["gid"] == gid) return true;
  }
  return false;
}

bool SeesTopic(JsonClient& client, const std::string& topic) {
  const JsonResponse topics = client.Get("/api/settle/topics");
  REQUIRE(topics.status == 200);
  return topics.body.find("\"" + topic + "\"") != std::string::npos;
}

TEST_CASE(
    "another client's TCC is refused as an absent gid, and A's secret goes to A's "
    "participant only, across kill -9",
    "[tenancy][process]") {
  World world;
  ParticipantServer a_participant;
  ParticipantServer b_participant;  // records every call it gets: it must get none
  auto settled = world.Start();
  std::unique_ptr<JsonClient> a = As(settled->port(), kTokenA);
  std::unique_ptr<JsonClient> b = As(settled->port(), kTokenB);

  const std::string gid = "tenancy-tcc-a";
  const std::string absent = "tenancy-tcc-z";
  REQUIRE(a->PostJson("/api/settle/prepare", json{{"gid", gid},
                                                  {"trans_type", "tcc"},
                                                  {"timeout_to_fail", 600},
                                                  {"branch_headers", {{"Authorization", kSecret}}}})
              .status == 200);
  REQUIRE(a->PostJson("/api/settle/registerBranch", json{{"gid", gid},
                                                         {"trans_type", "tcc"},
                                                         {"branch_id", "01"},
                                                         {"data", R"({"amount":30})"},
                                                         {"confirm", a_participant.Url("/confirm")},
                                                         {"cancel", a_participant.Url("/cancel")}})
              .status == 200);

  auto register_b = [&b, &b_participant](const std::string& g) {
    return b->PostJson("/api/settle/registerBranch",
                       json{{"gid", g},
                            {"trans_type", "tcc"},
                            {"branch_id", "02"},
                            {"data", "{}"},
                            {"confirm", b_participant.Url("/confirm")},
                            {"cancel", b_participant.Url("/cancel")}});
  };
  auto query_b = [&b](const std::string& g) {
    return b->Get("/api/settle/query?gid=" + g + "&payloads=true");
  };
  auto abort_b = [&b](const std::string& g) {
    return b->PostJson("/api/settle/abort", json{{"gid", g}, {"trans_type", "tcc"}});
  };
  auto submit_b = [&b](const std::string& g) {
    return b->PostJson("/api/settle/submit", json{{"gid", g}, {"trans_type", "tcc"}});
  };
  auto prepare_b = [&b](const std::string& g) {
    return b->PostJson("/api/settle/prepare", json{{"gid", g}, {"trans_type", "tcc"}});
  };

  // B's registration, query, submit and abort are answered as for an absent gid.
  CheckAnsweredAsAbsent(register_b, gid, absent);
  CHECK(register_b(gid).status == 409);
  CheckAnsweredAsAbsent(query_b, gid, absent);
  CHECK(query_b(gid).json["transaction"].is_null());
  CheckAnsweredAsAbsent(submit_b, gid, absent);
  CheckAnsweredAsAbsent(abort_b, gid, absent);
  // A prepare of a taken gid cannot be answered as for an absent one (that creates it): it is
  // refused without a word of what the gid holds.
  const JsonResponse prepared = prepare_b(gid);
  CHECK(prepared.status == 409);
  CHECK(prepared.json["message"] == "gid " + gid + " already exists");
  CHECK_FALSE(Lists(*b, gid));

  // Nothing B tried changed A's transaction; A, the operators and the admin see it.
  CHECK(a->Get("/api/settle/query?gid=" + gid).json["transaction"]["status"] == "prepared");
  CHECK(Lists(*a, gid));
  std::unique_ptr<JsonClient> reader = As(settled->port(), kTokenRead);
  std::unique_ptr<JsonClient> admin = As(settled->port(), kTokenAdmin);
  CHECK(Lists(*reader, gid));
  CHECK(Lists(*admin, gid));
  CHECK(admin->Get("/api/settle/query?gid=" + gid).json["branches"].size() == 2);

  // kill -9 and a restart: the gid is still A's.
  settled->Kill();
  settled = world.Start();
  a = As(settled->port(), kTokenA);
  b = As(settled->port(), kTokenB);
  CheckAnsweredAsAbsent(query_b, gid, absent);
  CheckAnsweredAsAbsent(register_b, gid, absent);
  CheckAnsweredAsAbsent(abort_b, gid, absent);
  CHECK_FALSE(Lists(*b, gid));

  // A's abort cancels A's branch only, with A's header, at A's participant; B's gets nothing.
  REQUIRE(a->PostJson("/api/settle/abort", json{{"gid", gid}, {"trans_type", "tcc"}}).status ==
          200);
  CHECK(testing::WaitForFinalStatus(
            *a, gid, std::chrono::steady_clock::now() + std::chrono::seconds(30)) == "failed");
  const auto cancels = a_participant.CallsTo("/cancel");
  REQUIRE(cancels.size() == 1);
  CHECK(cancels.front().query.at("branch_id") == "01");
  CHECK(cancels.front().headers.at("Authorization") == kSecret);
  CHECK(b_participant.Calls().empty());
}

TEST_CASE(
    "a topic belongs to the client whose subscription made it: others publish to it, and "
    "only it or an admin changes its subscribers",
    "[tenancy][process]") {
  World world;
  ParticipantServer a_participant;
  ParticipantServer b_participant;
  auto settled = world.Start();
  std::unique_ptr<JsonClient> client_a = As(settled->port(), kTokenA);
  std::unique_ptr<JsonClient> client_b = As(settled->port(), kTokenB);
  std::unique_ptr<JsonClient> admin_client = As(settled->port(), kTokenAdmin);
  JsonClient& a = *client_a;
  JsonClient& b = *client_b;
  JsonClient& admin = *admin_client;

  REQUIRE(a.PostJson("/api/settle/subscribe",
                     json{{"topic", "orders-a"}, {"url", a_participant.Url("/orders")}})
              .status == 200);
  const JsonResponse stolen = b.PostJson(
      "/api/settle/subscribe", json{{"topic", "orders-a"}, {"url", b_participant.Url("/steal")}});
  CHECK(stolen.status == 409);
  CHECK(stolen.json["message"] == "topic orders-a belongs to another client");
  CHECK(b.Get("/api/settle/subscribe?topic=orders-a&url=" + b_participant.Url("/steal")).status ==
        409);
  CHECK(b.PostJson("/api/settle/unsubscribe",
                   json{{"topic", "orders-a"}, {"url", a_participant.Url("/orders")}})
            .status == 409);
  CHECK_FALSE(SeesTopic(b, "orders-a"));
  CHECK(SeesTopic(a, "orders-a"));
  CHECK(SeesTopic(admin, "orders-a"));
  // An admin adds a receiver: the topic stays A's.
  CHECK(admin
            .PostJson("/api/settle/subscribe",
                      json{{"topic", "orders-a"}, {"url", a_participant.Url("/audit")}})
            .status == 200);
  CHECK(b.PostJson("/api/settle/subscribe",
                   json{{"topic", "orders-a"}, {"url", b_participant.Url("/steal")}})
            .status == 409);
  // B's own topic is B's.
  CHECK(b.PostJson("/api/settle/subscribe",
                   json{{"topic", "orders-b"}, {"url", b_participant.Url("/mine")}})
            .status == 200);
  CHECK_FALSE(SeesTopic(a, "orders-b"));

  // Publishing stays open: B's message to A's topic reaches A's receivers, and B's URL none.
  REQUIRE(b.PostJson("/api/settle/submit", json{{"gid", "tenancy-msg-b"},
                                                {"trans_type", "msg"},
                                                {"steps", {{{"action", "topic://orders-a"}}}},
                                                {"payloads", {R"({"order":7})"}}})
              .status == 200);
  REQUIRE(a_participant.WaitForCalls("/orders", 1));
  REQUIRE(a_participant.WaitForCalls("/audit", 1));
  CHECK(a_participant.CallsTo("/orders").front().body == R"({"order":7})");
  CHECK(b_participant.CountCalls("/steal") == 0);
}

TEST_CASE(
    "a client beyond --quota-unfinished is refused with 429 naming the flag, across kill "
    "-9, until its transactions finish",
    "[tenancy][quota][process]") {
  World world;
  auto settled = world.Start({"--quota-unfinished", "3"});
  std::unique_ptr<JsonClient> client_a = As(settled->port(), kTokenA);
  auto prepare = [](JsonClient& c, const std::string& gid) {
    return c.PostJson("/api/settle/prepare",
                      json{{"gid", gid}, {"trans_type", "tcc"}, {"timeout_to_fail", 600}});
  };
  for (int i = 0; i < 3; ++i) {
    REQUIRE(prepare(*client_a, "quota-a-" + std::to_string(i)).status == 200);
  }
  const JsonResponse refused = prepare(*client_a, "quota-a-3");
  CHECK(refused.status == 429);
  CHECK_THAT(refused.json["message"].get<std::string>(),
             Catch::StartsWith("quota: ") && Catch::Contains("--quota-unfinished"));
  CHECK(client_a->Get("/api/settle/query?gid=quota-a-3").json["transaction"].is_null());
  // Another caller's quota is its own, and an admin's transactions are not counted.
  std::unique_ptr<JsonClient> b = As(settled->port(), kTokenB);
  CHECK(prepare(*b, "quota-b-0").status == 200);
  std::unique_ptr<JsonClient> admin = As(settled->port(), kTokenAdmin);
  for (int i = 0; i < 4; ++i) {
    CHECK(prepare(*admin, "quota-admin-" + std::to_string(i)).status == 200);
  }
  std::unique_ptr<JsonClient> reader = As(settled->port(), kTokenRead);
  CHECK_THAT(reader->Get("/api/metrics").body,
             Catch::Contains("settle_quota_refusals_total{quota=\"unfinished\"} 1"));

  // The count is the store's: after kill -9, A still holds its three.
  settled->Kill();
  settled = world.Start({"--quota-unfinished", "3"});
  client_a = As(settled->port(), kTokenA);
  JsonClient& a = *client_a;
  CHECK(prepare(a, "quota-a-3").status == 429);

  // Once they finish, A may start again.
  for (int i = 0; i < 3; ++i) {
    REQUIRE(a.PostJson("/api/settle/submit",
                       json{{"gid", "quota-a-" + std::to_string(i)}, {"trans_type", "tcc"}})
                .status == 200);
  }
  for (int i = 0; i < 3; ++i) {
    CHECK(testing::WaitForFinalStatus(
              a, "quota-a-" + std::to_string(i),
              std::chrono::steady_clock::now() + std::chrono::seconds(30)) == "succeed");
  }
  int status = 0;
  CHECK(Eventually(
      [&] {
        status = prepare(a, "quota-a-3").status;
        return status == 200;
      },
      std::chrono::seconds(10), std::chrono::milliseconds(100)));
  CHECK(prepare(a, "quota-a-4").status == 200);
  CHECK(prepare(a, "quota-a-5").status == 200);
  CHECK(prepare(a, "quota-a-6").status == 429);
}

TEST_CASE(
    "a client beyond --quota-unfinished-bytes is refused with 429 naming the flag, its "
    "stored bytes unchanged",
    "[tenancy][quota][process]") {
  World world;
  ParticipantServer participant;
  auto settled = world.Start({"--quota-unfinished-bytes", "4000"});
  std::unique_ptr<JsonClient> client_a = As(settled->port(), kTokenA);
  JsonClient& a = *client_a;
  REQUIRE(a.PostJson("/api/settle/prepare",
                     json{{"gid", "bytes-a"}, {"trans_type", "tcc"}, {"timeout_to_fail", 600}})
              .status == 200);
  auto register_branch = [&](const std::string& id) {
    return a.PostJson("/api/settle/registerBranch", json{{"gid", "bytes-a"},
                                                         {"trans_type", "tcc"},
                                                         {"branch_id", id},
                                                         {"data", std::string(2500, 'x')},
                                                         {"confirm", participant.Url("/confirm")},
                                                         {"cancel", participant.Url("/cancel")}});
  };
  // Each branch stores its data once (its confirm and cancel rows share it): 2500 bytes and
  // the URLs. A second is beyond 4000.
  REQUIRE(register_branch("01").status == 200);
  const JsonResponse refused = register_branch("02");
  CHECK(refused.status == 429);
  CHECK_THAT(refused.json["message"].get<std::string>(),
             Catch::StartsWith("quota: ") && Catch::Contains("--quota-unfinished-bytes"));
  std::unique_ptr<JsonClient> admin_client = As(settled->port(), kTokenAdmin);
  JsonClient& admin = *admin_client;
  CHECK(admin.Get("/api/settle/query?gid=bytes-a").json["branches"].size() == 2);
  // A saga whose payloads alone are beyond the quota is refused whole.
  const JsonResponse saga =
      a.PostJson("/api/settle/submit", json{{"gid", "bytes-saga"},
                                            {"trans_type", "saga"},
                                            {"steps", {{{"action", participant.Url("/action")}}}},
                                            {"payloads", {std::string(5000, 'y')}}});
  CHECK(saga.status == 429);
  CHECK(admin.Get("/api/settle/query?gid=bytes-saga").json["transaction"].is_null());
  CHECK_THAT(admin.Get("/api/metrics").body,
             Catch::Contains("settle_quota_refusals_total{quota=\"unfinished_bytes\"} 2"));
}

}  // namespace
}  // namespace settle
