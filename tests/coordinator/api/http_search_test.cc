// The search of GET all through the real HTTP API of an in-process settled, with real
// participants on 127.0.0.1: a gid prefix, a creation time range (Settle's and DTM's
// parameters) and a participant host, combined with the other filters, paging and tenancy,
// and a 400 naming each bad parameter.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "in_process_settled.h"
#include "participant_server.h"
#include "settle/core/url.h"

namespace settle {
namespace {

using nlohmann::json;
using testing::ClientWith;
using testing::InProcessSettled;
using testing::JsonClient;
using testing::ParticipantServer;
using testing::ScriptedAnswer;

const std::string kReadToken = "search-read-token-aaaaaaaa";
const std::string kShopToken = "search-shop-token-bbbbbbbb";
const std::string kBillingToken = "search-billing-token-cccc";

void Configure(app::ServerConfig& config) {
  REQUIRE(config.api.tokens.Add(api::Access::kRead, kReadToken, "dashboard").ok());
  REQUIRE(config.api.tokens.Add(api::Access::kClient, kShopToken, "shop").ok());
  REQUIRE(config.api.tokens.Add(api::Access::kClient, kBillingToken, "billing").ok());
  // A failed call is retried long after the test is over: its branch stays pending.
  config.coordinator.retry_interval = std::chrono::seconds(60);
  config.retry.max_interval = std::chrono::seconds(600);
}

json Saga(const std::string& gid, const ParticipantServer& p) {
  return {{"gid", gid},
          {"trans_type", "saga"},
          {"steps", {{{"action", p.Url("/action")}, {"compensate", p.Url("/compensate")}}}},
          {"payloads", {R"({"amount":30})"}}};
}

// The gids of every page of `query` (a path and query string), following next_position.
std::vector<std::string> ListAll(JsonClient& client, const std::string& query) {
  std::vector<std::string> gids;
  std::string position;
  for (int page = 0; page < 20; ++page) {
    const auto r = client.Get(query + (position.empty() ? "" : "&position=" + position));
    INFO(query + ": " + r.body);
    REQUIRE(r.status == 200);
    for (const auto& t : r.json["transactions"]) gids.push_back(t["gid"]);
    position = r.json["next_position"].get<std::string>();
    if (position.empty()) return gids;
  }
  FAIL("more than 20 pages");
  return gids;
}

using Gids = std::vector<std::string>;

TEST_CASE(
    "GET all searches by gid prefix, creation time and participant host, with the filters, "
    "paging and tenancy",
    "[http][search]") {
  // Two participant hosts that fail every call: the sagas' actions stay pending on them.
  ParticipantServer bank;
  ParticipantServer shop_host;
  for (ParticipantServer* p : {&bank, &shop_host}) {
    p->SetDefault("/action", ScriptedAnswer{500, R"({"message":"down"})"});
  }
  InProcessSettled s(Configure);
  JsonClient reader = ClientWith(s.port(), kReadToken);
  JsonClient shop = ClientWith(s.port(), kShopToken);
  JsonClient billing = ClientWith(s.port(), kBillingToken);

  REQUIRE(shop.PostJson("/api/settle/submit", Saga("order-1", bank)).status == 200);
  REQUIRE(shop.PostJson("/api/settle/submit", Saga("order-2", shop_host)).status == 200);
  REQUIRE(billing.PostJson("/api/dtmsvr/submit", Saga("pay-1", bank)).status == 200);
  REQUIRE(shop.PostJson("/api/settle/prepare", json{{"gid", "order-tcc"}, {"trans_type", "tcc"}})
              .status == 200);
  REQUIRE(bank.WaitForCalls("/action", 2));
  REQUIRE(shop_host.WaitForCalls("/action", 1));

  // A gid prefix, on both prefixes of the API, page by page.
  CHECK(ListAll(reader, "/api/settle/all?gid_prefix=order-") ==
        Gids{"order-tcc", "order-2", "order-1"});
  CHECK(ListAll(reader, "/api/dtmsvr/all?gid_prefix=order-&limit=1") ==
        Gids{"order-tcc", "order-2", "order-1"});
  CHECK(ListAll(reader, "/api/settle/all?gid_prefix=ORDER-").empty());

  // A participant host, however it is written: its origin, a branch URL on it, another case.
  const std::string bank_origin = "http://127.0.0.1:" + std::to_string(bank.port());
  for (const std::string& host :
       {bank_origin, bank.Url("/action"), "HTTP://127.0.0.1:" + std::to_string(bank.port())}) {
    INFO(host);
    CHECK(ListAll(reader, "/api/settle/all?host=" + PercentEncode(host)) ==
          Gids{"pay-1", "order-1"});
  }
  CHECK(ListAll(reader, "/api/dtmsvr/all?host=" + PercentEncode(shop_host.Url("/"))) ==
        Gids{"order-2"});
  CHECK(ListAll(reader, "/api/settle/all?host=http%3A%2F%2F127.0.0.1%3A1").empty());

  // With the other filters and paging.
  CHECK(ListAll(reader, "/api/settle/all?status=submitted&gid_prefix=order-&limit=1") ==
        Gids{"order-2", "order-1"});
  CHECK(ListAll(reader, "/api/settle/all?trans_type=tcc&gid_prefix=order-") == Gids{"order-tcc"});
  CHECK(ListAll(reader, "/api/settle/all?gid_prefix=order-&host=" + PercentEncode(bank_origin)) ==
        Gids{"order-1"});
  CHECK(ListAll(reader, "/api/settle/all?stuck=true&host=" + PercentEncode(bank_origin)).empty());

  // Tenancy: a client finds only its own, whatever it searches.
  CHECK(ListAll(billing, "/api/settle/all?host=" + PercentEncode(bank_origin)) == Gids{"pay-1"});
  CHECK(ListAll(shop, "/api/settle/all?host=" + PercentEncode(bank_origin)) == Gids{"order-1"});
  CHECK(ListAll(billing, "/api/settle/all?gid_prefix=order-").empty());

  // Creation times, both ends included: RFC 3339 as /query shows them, or DTM's milliseconds.
  const auto order2 = reader.Get("/api/settle/query?gid=order-2");
  REQUIRE(order2.status == 200);
  const std::string created = order2.json["transaction"]["create_time"];
  const Gids from_order2 = ListAll(
      reader, "/api/settle/all?gid_prefix=order-2&create_time_start=" + PercentEncode(created) +
                  "&create_time_end=" + PercentEncode(created));
  CHECK(from_order2 == Gids{"order-2"});
  CHECK(ListAll(reader, "/api/settle/all?create_time_start=2999-01-01T00:00:00Z").empty());
  CHECK(ListAll(reader, "/api/settle/all?create_time_end=1970-01-01T00:00:01%2B00:00").empty());
  // DTM's names, in Unix milliseconds, and an empty one as absent (DTM's server does the same).
  CHECK(ListAll(reader, "/api/dtmsvr/all?createTimeStart=1000&createTimeEnd=&gid_prefix=pay-") ==
        Gids{"pay-1"});
  CHECK(ListAll(reader, "/api/dtmsvr/all?createTimeEnd=1000").empty());
}

TEST_CASE("GET all refuses a bad search parameter with a 400 naming it",
          "[http][search][bad-input]") {
  InProcessSettled s;
  for (const auto& [query, field] : std::vector<std::pair<std::string, std::string>>{
           {"gid_prefix=a%2Fb", "gid_prefix"},
           {"gid_prefix=" + std::string(129, 'a'), "gid_prefix"},
           {"create_time_start=yesterday", "create_time_start"},
           {"create_time_start=2026-11-22T10:00:00", "create_time_start"},
           {"create_time_end=2026-02-30T00:00:00Z", "create_time_end"},
           {"createTimeStart=-1", "createTimeStart"},
           {"createTimeEnd=1.5", "createTimeEnd"},
           {"create_time_start=2000&create_time_end=1000", "create_time_end"},
           {"host=ftp%3A%2F%2Fbank%3A21", "host"},
           {"host=other", "host"},
           {"host=http%3A%2F%2Fbank%3A0", "host"}}) {
    for (const std::string prefix : {"/api/settle", "/api/dtmsvr"}) {
      const std::string path = prefix + "/all?" + query;
      INFO(path);
      const auto r = s.client().Get(path);
      CHECK(r.status == 400);
      const std::string message = r.json["message"].get<std::string>();
      CHECK(message.substr(0, message.find(':')) == field);
    }
  }
  CHECK(s.client().Get("/api/settle/all?gid_prefix=ok").status == 200);
}

}  // namespace
}  // namespace settle
