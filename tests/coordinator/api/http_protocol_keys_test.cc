// The protocol's keys belong to settled (docs/protocol.md §1.4, §3.7, §4.1): over real HTTP, a
// request whose branch URL's query names gid, trans_type, branch_id, op, ... or whose
// branch_headers name dtm-* or a field settled sets itself, gets a 400 naming the field and the
// key, nothing is stored, and no participant is called.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "in_process_settled.h"
#include "participant_server.h"
#include "settle/core/url.h"
#include "store_as_before.h"
#include "temp_dir.h"

namespace settle {
namespace {

using nlohmann::json;
using testing::InProcessSettled;
using testing::ParticipantServer;
using testing::StoreAsBefore;

// The attack of issue 42: a client's own words for the victim's confirm.
constexpr const char* kVictimQuery = "?gid=VICTIM&trans_type=tcc&branch_id=02&op=confirm";

std::string KeyMessage(const std::string& field, const std::string& key) {
  return field + ": the query names \"" + key + "\", which settled sets itself (protocol.md §4.1)";
}

json Saga(const std::string& gid, const std::string& action, const std::string& compensate) {
  return {{"gid", gid},
          {"trans_type", "saga"},
          {"steps", {{{"action", action}, {"compensate", compensate}}}},
          {"payloads", {R"({"amount":10})"}}};
}

json Message(const std::string& gid, const std::string& action, const std::string& query_prepared) {
  return {{"gid", gid},
          {"trans_type", "msg"},
          {"steps", {{{"action", action}}}},
          {"payloads", {R"({"amount":10})"}},
          {"query_prepared", query_prepared}};
}

// Whether settled stores nothing under `gid`.
bool NothingStored(InProcessSettled& s, const std::string& gid) {
  const json q = s.Query(gid);
  return q.is_object() && q["transaction"].is_null();
}

TEST_CASE("a saga whose step URL names a protocol key is refused at submit, and nothing is stored",
          "[http][protocol_keys]") {
  ParticipantServer bank;
  InProcessSettled s;
  const std::string victim = bank.Url("/api/TransInConfirm") + kVictimQuery;
  for (const char* prefix : {"/api/settle/", "/api/dtmsvr/"}) {
    INFO(prefix);
    auto r = s.client().PostJson(std::string(prefix) + "submit",
                                 Saga("evil-1", victim, bank.Url("/api/TransInRevert")));
    CHECK(r.status == 400);
    CHECK(r.json["message"] == KeyMessage("steps[0].action", "gid"));
    r = s.client().PostJson(std::string(prefix) + "submit",
                            Saga("evil-2", bank.Url("/in"), bank.Url("/undo?a=1;OP=cancel")));
    CHECK(r.status == 400);
    CHECK(r.json["message"] == KeyMessage("steps[0].compensate", "op"));
    r = s.client().PostJson(std::string(prefix) + "submit",
                            Saga("evil-3", bank.Url("/in?%67id=x"), bank.Url("/undo")));
    CHECK(r.json["message"] == KeyMessage("steps[0].action", "gid"));
  }
  CHECK(NothingStored(s, "evil-1"));
  CHECK(NothingStored(s, "evil-2"));
  CHECK(NothingStored(s, "evil-3"));
  // A query of the participant's own is fine, and gets each of settled's keys once.
  json fine = Saga("fine-1", bank.Url("/in?account=2&gidx=1"), bank.Url("/undo"));
  fine["wait_result"] = true;
  REQUIRE(s.Call("submit", fine).status == 200);
  CHECK(s.StatusOf("fine-1") == "succeed");
  const auto calls = bank.CallsTo("/in");
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].query == std::map<std::string, std::string>{{"account", "2"},
                                                             {"gidx", "1"},
                                                             {"gid", "fine-1"},
                                                             {"trans_type", "saga"},
                                                             {"branch_id", "01"},
                                                             {"op", "action"}});
  CHECK(bank.CountCalls("/api/TransInConfirm") == 0);
  CHECK(bank.CountCalls("/api/TransInRevert") == 0);
}

TEST_CASE(
    "a message whose step or query_prepared names a protocol key is refused at prepare and "
    "submit",
    "[http][protocol_keys]") {
  ParticipantServer bank;
  InProcessSettled s;
  const auto prepared =
      s.Call("prepare", Message("m-1", bank.Url("/in?trans_type=msg"), bank.Url("/qp")));
  CHECK(prepared.status == 400);
  CHECK(prepared.json["message"] == KeyMessage("steps[0].action", "trans_type"));
  const auto checked =
      s.Call("prepare", Message("m-2", bank.Url("/in"), bank.Url("/qp?gid=VICTIM")));
  CHECK(checked.status == 400);
  CHECK(checked.json["message"] == KeyMessage("query_prepared", "gid"));
  const auto submitted =
      s.Call("submit", Message("m-3", bank.Url("/in?Branch_ID=02"), bank.Url("/qp")));
  CHECK(submitted.status == 400);
  CHECK(submitted.json["message"] == KeyMessage("steps[0].action", "branch_id"));
  for (const char* gid : {"m-1", "m-2", "m-3"}) CHECK(NothingStored(s, gid));
  CHECK(bank.Calls().empty());
}

TEST_CASE("a TCC or XA branch whose URL names a protocol key is not registered",
          "[http][protocol_keys]") {
  ParticipantServer bank;
  InProcessSettled s;
  REQUIRE(s.Call("prepare", {{"gid", "t-1"}, {"trans_type", "tcc"}}).status == 200);
  auto branch = [&](const std::string& confirm, const std::string& cancel) {
    return s.Call("registerBranch", {{"gid", "t-1"},
                                     {"trans_type", "tcc"},
                                     {"branch_id", "01"},
                                     {"data", R"({"amount":10})"},
                                     {"confirm", confirm},
                                     {"cancel", cancel}});
  };
  auto r = branch(bank.Url("/api/TransInConfirm") + kVictimQuery, bank.Url("/cancel"));
  CHECK(r.status == 400);
  CHECK(r.json["message"] == KeyMessage("confirm", "gid"));
  r = branch(bank.Url("/confirm"), bank.Url("/cancel?dtm=http://evil/"));
  CHECK(r.status == 400);
  CHECK(r.json["message"] == KeyMessage("cancel", "dtm"));
  CHECK(s.Query("t-1")["branches"].empty());

  REQUIRE(s.Call("prepare", {{"gid", "x-1"}, {"trans_type", "xa"}}).status == 200);
  for (const char* route : {"registerBranch", "registerXaBranch"}) {
    INFO(route);
    r = s.Call(route, {{"gid", "x-1"},
                       {"trans_type", "xa"},
                       {"branch_id", "01"},
                       {"url", bank.Url("/xa?phase2_url=") + PercentEncode(bank.Url("/evil"))}});
    CHECK(r.status == 400);
    CHECK(r.json["message"] == KeyMessage("url", "phase2_url"));
  }
  CHECK(s.Query("x-1")["branches"].empty());
  // Aborted, nothing is called: there was nothing to call.
  REQUIRE(s.Call("abort", {{"gid", "t-1"}, {"trans_type", "tcc"}}).status == 200);
  REQUIRE(s.WaitForStatus("t-1", "failed"));
  CHECK(bank.Calls().empty());
}

TEST_CASE("a subscriber URL that names a protocol key is refused, in the query form and as JSON",
          "[http][protocol_keys]") {
  ParticipantServer bank;
  InProcessSettled s;
  const std::string url = bank.Url("/in?GID=VICTIM");
  auto r = s.client().Get("/api/dtmsvr/subscribe?topic=orders&url=" + PercentEncode(url));
  CHECK(r.status == 400);
  CHECK(r.json["message"] == KeyMessage("url", "gid"));
  r = s.Call("subscribe", {{"topic", "orders"}, {"url", bank.Url("/in?a=1;op=confirm")}});
  CHECK(r.status == 400);
  CHECK(r.json["message"] == KeyMessage("url", "op"));
  CHECK(s.client().Get("/api/settle/topics").json["topics"].empty());
  // A message to the topic finds no subscriber.
  CHECK(s.Call("submit", Message("m-t", "topic://orders", "")).status == 400);
  CHECK(bank.Calls().empty());
}

TEST_CASE("branch headers that name dtm-* or a field settled sets itself are refused",
          "[http][protocol_keys]") {
  ParticipantServer bank;
  InProcessSettled s;
  for (const std::string name :
       {"dtm-gid", "Dtm-Op", "Host", "Content-Type", "Signature", "Signature-Input",
        "Content-Digest", "X-Forwarded-Host", "Forwarded", "Settle-Anything", "Connection"}) {
    INFO(name);
    json saga = Saga("h-1", bank.Url("/in"), bank.Url("/undo"));
    saga["branch_headers"] = {{name, "v"}};
    auto r = s.Call("submit", saga);
    CHECK(r.status == 400);
    CHECK(r.json["message"] == "branch_headers." + name +
                                   ": a header settled sets itself; a transaction may not set "
                                   "it (protocol.md §3.7)");
    r = s.Call("prepare",
               {{"gid", "h-2"}, {"trans_type", "tcc"}, {"branch_headers", {{name, "v"}}}});
    CHECK(r.status == 400);
  }
  CHECK(NothingStored(s, "h-1"));
  CHECK(NothingStored(s, "h-2"));
  CHECK(bank.Calls().empty());
}

// The action row of a one-step saga, as /query shows it.
json ActionOf(const json& query) {
  for (const json& branch : query["branches"]) {
    if (branch["op"] == "action") return branch;
  }
  FAIL("no action row in " << query.dump());
  return {};
}

TEST_CASE(
    "a saga stored before the check is not sent: its call fails saying why, is retried and "
    "flagged stuck",
    "[http][protocol_keys][upgrade]") {
  ParticipantServer bank;
  testing::TempDir dir;
  const std::string db = dir.File("settle.db");
  engine::SubmitRequest saga{.gid = "old-1", .trans_type = TransType::kSaga};
  saga.steps = {{bank.Url("/api/TransInConfirm") + kVictimQuery, bank.Url("/undo")}};
  saga.payloads = {R"({"amount":10})"};
  StoreAsBefore(db, saga);
  engine::SubmitRequest headers{.gid = "old-2", .trans_type = TransType::kSaga};
  headers.steps = {{bank.Url("/in"), bank.Url("/undo")}};
  headers.payloads = {"{}"};
  headers.options.branch_headers = {{"Host", "other-bank:80"}};
  StoreAsBefore(db, headers);

  // settled resumes both at start (stuck after 3 failures, retried from 50 ms).
  InProcessSettled s([&](app::ServerConfig& c) { c.db_path = db; });
  for (const char* gid : {"old-1", "old-2"}) {
    INFO(gid);
    REQUIRE(s.WaitUntil(gid, [](const json& q) {
      return q.is_object() && q["transaction"].is_object() && q["transaction"]["stuck"] == true;
    }));
  }
  const json one = ActionOf(s.Query("old-1"));
  CHECK(one["status"] == "prepared");
  CHECK(one["failures"].get<int>() >= 3);
  CHECK(one["last_error"] ==
        "UNKNOWN: not sent: the branch URL's query names \"gid\", which settled sets itself");
  CHECK(ActionOf(s.Query("old-2"))["last_error"] ==
        "UNKNOWN: not sent: branch header Host is one settled sets itself");
  CHECK(bank.Calls().empty());
}

}  // namespace
}  // namespace settle
