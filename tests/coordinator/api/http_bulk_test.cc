// Bulk actions over HTTP (docs/operations.md, "Bulk actions"): POST /api/admin/bulk answers a
// dry run's count and sample, or starts a stored job whose progress GET /api/admin/jobs shows;
// each transaction it acts on is audited with the job; a host's redirect sends a saga's money
// to where the participant moved; bad requests name their field and change nothing; only admin
// tokens act. In-process settled, real participants, real sockets.
#include <catch2/catch.hpp>

#include <string>

#include "admin_world.h"
#include "eventually.h"
#include "participant_server.h"

namespace settle {
namespace {

using nlohmann::json;
using testing::AdminWorld;
using testing::JsonClient;
using testing::JsonResponse;
using testing::ParticipantServer;
using testing::RetryHourly;
using testing::ScriptedAnswer;

json SagaTo(const std::string& gid, const std::string& action, const std::string& compensate) {
  return {{"gid", gid},
          {"trans_type", "saga"},
          {"steps", {{{"action", action}, {"compensate", compensate}}}},
          {"payloads", {R"({"amount":30})"}}};
}

// The job as GET /api/admin/jobs?id= shows it once it is no longer running.
json FinishedJob(JsonClient& reader, const std::string& id) {
  json job;
  REQUIRE(testing::Eventually([&] {
    const JsonResponse answer = reader.Get("/api/admin/jobs?id=" + id);
    if (answer.status != 200) return false;
    job = answer.json["job"];
    return job["state"] != "running";
  }));
  return job;
}

TEST_CASE("a bulk pause answers its dry run, then runs as a job audited per transaction",
          "[http][bulk]") {
  ParticipantServer bank;
  bank.Script("/action", {ScriptedAnswer{500, R"({"message":"ledger offline"})"},
                          ScriptedAnswer{500, R"({"message":"ledger offline"})"},
                          ScriptedAnswer{500, R"({"message":"ledger offline"})"},
                          ScriptedAnswer{500, R"({"message":"ledger offline"})"}});
  AdminWorld world(RetryHourly);
  for (const std::string gid : {"order-1", "order-2", "order-3", "keep-1"}) {
    REQUIRE(world.client
                .PostJson("/api/settle/submit",
                          SagaTo(gid, bank.Url("/action"), bank.Url("/compensate")))
                .status == 200);
  }
  REQUIRE(bank.WaitForCalls("/action", 4));

  json ask = {{"action", "pause"},
              {"filter", {{"gid_prefix", "order-"}, {"status", "submitted"}}},
              {"reason", "ledger bug, OPS-12"},
              {"dry_run", true}};
  const JsonResponse plan = world.admin.PostJson("/api/admin/bulk", ask);
  REQUIRE(plan.status == 200);
  CHECK(plan.json["dry_run"] == true);
  CHECK(plan.json["matched"] == 3);
  CHECK(plan.json["complete"] == true);
  REQUIRE(plan.json["sample"].size() == 3);
  CHECK(plan.json["sample"][0]["gid"] == "order-3");
  CHECK(world.reader.Get("/api/settle/all?paused=true").json["transactions"].empty());

  // Readers and clients may not act; a reader sees the jobs, a client does not.
  ask["dry_run"] = false;
  CHECK(world.reader.PostJson("/api/admin/bulk", ask).status == 403);
  CHECK(world.client.PostJson("/api/admin/bulk", ask).status == 403);
  CHECK(world.reader.Get("/api/admin/jobs").status == 200);
  CHECK(world.client.Get("/api/admin/jobs").status == 403);

  const JsonResponse started = world.admin.PostJson("/api/admin/bulk", ask);
  REQUIRE(started.status == 202);
  const std::string id = started.json["job"]["id"];
  CHECK(started.json["job"]["matched"] == 3);
  CHECK(started.json["job"]["actor"] == "on-call");
  CHECK(started.json["job"]["filter"] == json{{"gid_prefix", "order-"}, {"status", "submitted"}});
  const json job = FinishedJob(world.reader, id);
  CHECK(job["state"] == "done");
  CHECK(job["acted"] == 3);
  CHECK(job["skipped"] == 0);

  const JsonResponse parked = world.reader.Get("/api/settle/all?paused=true");
  REQUIRE(parked.json["transactions"].size() == 3);
  for (const json& tx : parked.json["transactions"]) {
    CHECK(tx["paused"]["reason"] == "ledger bug, OPS-12");
    CHECK(tx["gid"].get<std::string>().starts_with("order-"));
  }
  const JsonResponse audit = world.reader.Get("/api/admin/audit?action=pause");
  REQUIRE(audit.json["entries"].size() == 3);
  for (const json& e : audit.json["entries"]) CHECK(e["parameters"]["job"] == id);
  const JsonResponse bulk_entry = world.reader.Get("/api/admin/audit?action=bulk");
  REQUIRE(bulk_entry.json["entries"].size() == 1);
  CHECK(bulk_entry.json["entries"][0]["target"] == id);
  CHECK(bulk_entry.json["entries"][0]["parameters"]["matched"] == 3);
  const JsonResponse jobs = world.reader.Get("/api/admin/jobs");
  REQUIRE(jobs.json["jobs"].size() == 1);
  CHECK(jobs.json["jobs"][0]["id"] == id);

  // Finished: neither cancelled nor resumed.
  const json again = {{"id", id}, {"reason", "oops"}};
  CHECK(world.admin.PostJson("/api/admin/jobs/cancel", again).status == 409);
  CHECK(world.admin.PostJson("/api/admin/jobs/resume", again).status == 409);
  CHECK(world.reader.PostJson("/api/admin/jobs/cancel", again).status == 403);
  const json unknown = {{"id", "job-nobody"}, {"reason", "oops"}};
  CHECK(world.admin.PostJson("/api/admin/jobs/cancel", unknown).status == 404);
  CHECK(world.admin.Get("/api/admin/jobs?id=job-nobody").status == 404);
}

TEST_CASE("a bulk redirect sends a saga's money to the host the participant moved to",
          "[http][bulk]") {
  ParticipantServer old_bank;
  old_bank.Script("/bank/out", {ScriptedAnswer{503, R"({"message":"decommissioned"})"},
                                ScriptedAnswer{503, R"({"message":"decommissioned"})"}});
  ParticipantServer new_bank;
  AdminWorld world(RetryHourly);
  for (const std::string gid : {"pay-1", "pay-2"}) {
    REQUIRE(world.client
                .PostJson("/api/settle/submit",
                          SagaTo(gid, old_bank.Url("/bank/out?acct=7"), old_bank.Url("/bank/back")))
                .status == 200);
  }
  REQUIRE(old_bank.WaitForCalls("/bank/out", 2));
  // The 503s are stored (each row's attempt recorded) before the operator redirects: a pass
  // still storing its outcome would otherwise write its hourly retry over the redirect's "now"
  // (a race of its own, noted on issue 46's stop).
  for (const std::string gid : {"pay-1", "pay-2"}) {
    REQUIRE(testing::Eventually([&] {
      const json q = world.admin.Get("/api/settle/query?gid=" + gid).json;
      for (const json& b : q["branches"]) {
        if (b["op"] == "action" && b["attempts"].get<int>() >= 1) return true;
      }
      return false;
    }));
  }
  const std::string from = "http://127.0.0.1:" + std::to_string(old_bank.port());
  const std::string to = "http://localhost:" + std::to_string(new_bank.port());
  const json ask = {
      {"action", "redirect"}, {"from", from}, {"to", to}, {"reason", "bank moved, CHG-88"}};
  const JsonResponse started = world.admin.PostJson("/api/admin/bulk", ask);
  REQUIRE(started.status == 202);
  CHECK(started.json["job"]["matched"] == 2);
  CHECK(started.json["job"]["parameters"] == json{{"from", from}, {"to", to}});
  const json job = FinishedJob(world.admin, started.json["job"]["id"]);
  CHECK(job["acted"] == 2);

  // Each transfer is made once, on the new host, with its query; the old host hears no more.
  REQUIRE(new_bank.WaitForCalls("/bank/out", 2));
  for (const std::string gid : {"pay-1", "pay-2"}) {
    REQUIRE(testing::Eventually([&] {
      return world.admin.Get("/api/settle/query?gid=" + gid).json["transaction"]["status"] ==
             "succeed";
    }));
  }
  CHECK(new_bank.CountCalls("/bank/out") == 2);
  CHECK(new_bank.CountCalls("/bank/back") == 0);
  CHECK(old_bank.CountCalls("/bank/out") == 2);
  for (const auto& call : new_bank.Calls()) {
    if (call.path == "/bank/out") CHECK(call.query.at("acct") == "7");
  }
}

TEST_CASE("a bad bulk request names its field and starts nothing", "[http][bulk]") {
  AdminWorld world(RetryHourly);
  const auto refusal = [&world](const std::string& body) {
    const JsonResponse r = world.admin.Post("/api/admin/bulk", body);
    INFO(body << " -> " << r.status << " " << r.body);
    CHECK(r.status == 400);
    return r.json.value("message", std::string());
  };
  const std::string reason = R"("reason":"x")";
  CHECK_THAT(refusal("{"), Catch::Contains("JSON"));
  CHECK_THAT(refusal(R"({"filter":{"status":"prepared"},)" + reason + "}"),
             Catch::StartsWith("action: required"));
  CHECK_THAT(refusal(R"({"action":"delete","all":true,)" + reason + "}"),
             Catch::StartsWith("action: expected"));
  CHECK_THAT(refusal(R"({"action":"pause","filter":[],)" + reason + "}"),
             Catch::StartsWith("filter: expected a JSON object"));
  CHECK_THAT(refusal(R"({"action":"pause","filter":{"limit":5},)" + reason + "}"),
             Catch::StartsWith("filter.limit: unknown member"));
  CHECK_THAT(refusal(R"({"action":"pause","filter":{"status":"asleep"},)" + reason + "}"),
             Catch::StartsWith("filter.status: expected"));
  CHECK_THAT(refusal(R"({"action":"pause","filter":{"host":"not a host"},)" + reason + "}"),
             Catch::StartsWith("filter.host: expected"));
  CHECK_THAT(refusal(R"({"action":"pause","filter":{"older_than":-5},)" + reason + "}"),
             Catch::StartsWith("filter.older_than: expected"));
  CHECK_THAT(refusal(R"({"action":"pause","filter":{},)" + reason + "}"),
             Catch::StartsWith("filter: empty"));
  CHECK_THAT(refusal(R"({"action":"pause","all":"yes",)" + reason + "}"),
             Catch::StartsWith("all: "));
  CHECK_THAT(refusal(R"({"action":"pause","all":true})"), Catch::StartsWith("reason: required"));
  CHECK_THAT(refusal(R"({"action":"pause","all":true,"gid":"g1",)" + reason + "}"),
             Catch::StartsWith("gid: unknown member"));
  CHECK_THAT(refusal(R"({"action":"redirect","from":"http://a:1",)" + reason + "}"),
             Catch::StartsWith("to: expected"));
  CHECK_THAT(refusal(R"({"action":"pause","all":true,"to":"http://a:1",)" + reason + "}"),
             Catch::StartsWith("to: only a redirect"));
  const JsonResponse jobs = world.admin.Get("/api/admin/jobs");
  REQUIRE(jobs.status == 200);
  CHECK(jobs.json["jobs"].empty());
  const JsonResponse no_reason = world.admin.PostJson("/api/admin/jobs/cancel", {{"id", "job-1"}});
  CHECK(no_reason.status == 400);
  CHECK_THAT(no_reason.json.value("message", ""), Catch::StartsWith("reason: required"));
}

}  // namespace
}  // namespace settle
