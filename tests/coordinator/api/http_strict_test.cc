// A strict coordinator over HTTP (docs/protocol.md §1.5, §3.15): members settle does not know
// are named in Settle-Ignored-Fields (or refused with --strict-requests), while the bodies DTM's
// client SDKs send pass without a word; a repeat that differs from the request that created
// the transaction is a 409 naming the difference.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "in_process_settled.h"
#include "participant_server.h"

namespace settle {
namespace {

using nlohmann::json;
using testing::InProcessSettled;
using testing::JsonResponse;
using testing::ParticipantServer;

constexpr const char* kIgnored = "Settle-Ignored-Fields";

json Saga(const std::string& gid, ParticipantServer& p, std::vector<std::string> actions) {
  json body = {
      {"gid", gid}, {"trans_type", "saga"}, {"steps", json::array()}, {"payloads", json::array()}};
  for (const std::string& action : actions) {
    body["steps"].push_back({{"action", p.Url("/" + action)}, {"compensate", p.Url("/undo")}});
    body["payloads"].push_back(R"({"amount":30})");
  }
  return body;
}

// The Settle-Ignored-Fields header of an answer; empty when it has none.
std::string IgnoredFields(const JsonResponse& r) {
  REQUIRE(r.headers.count(kIgnored) <= 1);
  const auto it = r.headers.find(kIgnored);
  return it == r.headers.end() ? "" : it->second;
}

TEST_CASE("a misspelled option is named in Settle-Ignored-Fields and the request is served",
          "[http][strict]") {
  ParticipantServer p;
  InProcessSettled s;
  json body = Saga("s1", p, {"a"});
  body["wait_resutl"] = true;
  body["retry_limt"] = 1;
  body["steps"][0]["timeout"] = 5;
  body["protocol"] = "http";  // DTM's
  const JsonResponse r = s.Call("submit", body);
  CHECK(r.status == 200);
  // The body's members by name (as the JSON parser keeps them), then each step's.
  CHECK(IgnoredFields(r) == "retry_limt, wait_resutl, steps[0].timeout");
  REQUIRE(p.WaitForCalls("/a", 1));

  // A null member is an absent one: nothing to name.
  json nulls = Saga("s2", p, {"a"});
  nulls["wait_resutl"] = nullptr;
  CHECK(IgnoredFields(s.Call("submit", nulls)).empty());
  // Named whatever the answer: here the gid is taken by another request.
  json taken = Saga("s1", p, {"b"});
  taken["colour"] = "blue";
  const JsonResponse conflict = s.Call("submit", taken);
  CHECK(conflict.status == 409);
  CHECK(IgnoredFields(conflict) == "colour");
}

TEST_CASE("the bodies DTM's client SDKs send name no ignored field", "[http][strict][compat]") {
  ParticipantServer p;
  InProcessSettled s([](app::ServerConfig& c) { c.coordinator.strict_requests = true; });
  SECTION("Go's dtmcli: a saga with its whole TransBase") {
    json body = Saga("go-saga", p, {"a"});
    body.update({{"protocol", ""},
                 {"concurrent", false},
                 {"retry_count", 0},
                 {"custom_data", ""},
                 {"wait_result", true}});
    const JsonResponse r = s.client().PostJson("/api/dtmsvr/submit", body);
    CHECK(r.status == 200);
    CHECK(IgnoredFields(r).empty());
  }
  SECTION("Go's, Node's and C#'s messages: the delay added to the submit only") {
    json prepare = {{"gid", "go-msg"},
                    {"trans_type", "msg"},
                    {"protocol", ""},
                    {"concurrent", false},
                    {"steps", {{{"action", p.Url("/TransIn")}}}},
                    {"payloads", {R"({"amount":30})"}},
                    {"query_prepared", p.Url("/QueryPrepared")}};
    REQUIRE(s.client().PostJson("/api/dtmsvr/prepare", prepare).status == 200);
    json submit = prepare;
    submit["custom_data"] = R"({"delay":1})";
    const JsonResponse r = s.client().PostJson("/api/dtmsvr/submit", submit);
    CHECK(r.status == 200);
    CHECK(IgnoredFields(r).empty());
    REQUIRE(p.WaitForCalls("/TransIn", 1));
  }
  SECTION("Node's and PHP's TCC registration, with status and try; Java's subType") {
    REQUIRE(s.Call("prepare", {{"gid", "node-tcc"}, {"trans_type", "tcc"}}).status == 200);
    const json branch = {{"gid", "node-tcc"},
                         {"trans_type", "tcc"},
                         {"branch_id", "01"},
                         {"data", "{}"},
                         {"status", "prepared"},
                         {"try", p.Url("/Try")},
                         {"confirm", p.Url("/Confirm")},
                         {"cancel", p.Url("/Cancel")},
                         {"subType", "tcc"}};
    const JsonResponse r = s.client().PostJson("/api/dtmsvr/registerTccBranch", branch);
    CHECK(r.status == 200);
    CHECK(IgnoredFields(r).empty());
  }
}

TEST_CASE("with --strict-requests an unknown member is a 400 naming it, and nothing is stored",
          "[http][strict][bad-input]") {
  ParticipantServer p;
  InProcessSettled s([](app::ServerConfig& c) { c.coordinator.strict_requests = true; });
  json body = Saga("s1", p, {"a"});
  body["retry_limt"] = 1;
  const JsonResponse r = s.Call("submit", body);
  CHECK(r.status == 400);
  CHECK_THAT(r.json["message"].get<std::string>(), Catch::StartsWith("retry_limt: unknown field"));
  CHECK(s.StatusOf("s1").empty());
  body["steps"][0]["actoin"] = p.Url("/a");
  body.erase("retry_limt");
  CHECK_THAT(s.Call("submit", body).json["message"].get<std::string>(),
             Catch::StartsWith("steps[0].actoin: unknown field"));
  CHECK(s.Call("resetNextCronTime", {{"gid", "s1"}, {"gdi", "s1"}}).status == 400);
  CHECK(s.Call("deleteTopic", {{"topic", "t"}, {"topics", "t"}}).status == 400);
  body["steps"][0].erase("actoin");
  CHECK(s.Call("submit", body).status == 200);
}

TEST_CASE("a hostile member name cannot add a header line to the answer",
          "[http][strict][bad-input]") {
  ParticipantServer p;
  InProcessSettled s;
  json body = Saga("s1", p, {"a"});
  body["x\r\nSet-Cookie: session=stolen"] = 1;
  body[std::string(5000, 'k')] = 1;
  const JsonResponse r = s.Call("submit", body);
  CHECK(r.status == 200);
  CHECK(r.headers.count("Set-Cookie") == 0);
  CHECK(IgnoredFields(r) == std::string(64, 'k') + "..., x%0D%0ASet-Cookie:%20session=stolen");
  CHECK(s.client().Get("/api/ping").status == 200);  // still serving
}

TEST_CASE("a duration in the wrong form is refused naming its unit", "[http][strict][bad-input]") {
  ParticipantServer p;
  InProcessSettled s;
  json body = Saga("s1", p, {"a"});
  body["retry_interval"] = "3s";
  const JsonResponse r = s.Call("submit", body);
  CHECK(r.status == 400);
  CHECK_THAT(r.json["message"].get<std::string>(),
             Catch::StartsWith("retry_interval: must be a whole number of seconds from 0 to"));
}

TEST_CASE("a saga submitted again with other steps is a 409 naming the step, the first stays",
          "[http][strict][repeat]") {
  ParticipantServer p;
  p.SetDefault("/a", {503, "{}"});  // keeps the first saga submitted while the repeats arrive
  InProcessSettled s;
  REQUIRE(s.Call("submit", Saga("s1", p, {"a", "b"})).status == 200);
  const JsonResponse other = s.Call("submit", Saga("s1", p, {"a", "c"}));
  CHECK(other.status == 409);
  CHECK(other.json["dtm_result"] == "FAILURE");
  CHECK_THAT(other.json["message"].get<std::string>(),
             Catch::StartsWith("steps[1]: differs from the request that created gid s1"));
  CHECK(s.Call("submit", Saga("s1", p, {"a", "b"})).status == 200);  // the same again
  const json q = s.Query("s1");
  CHECK(q["branches"].size() == 4);
  CHECK(p.CountCalls("/c") == 0);
}

}  // namespace
}  // namespace settle
