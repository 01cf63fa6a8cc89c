// Workflows over HTTP as DTM's Go workflow client speaks to DTM (client/workflow: imp.go,
// rpc.go), against a real settled and a real workflow service on 127.0.0.1 that settled resumes
// (docs/protocol.md §3.16).
#include <catch2/catch.hpp>

#include <atomic>
#include <string>

#include "in_process_settled.h"
#include "participant_server.h"
#include "settle/core/base64.h"

namespace settle {
namespace {

using nlohmann::json;
using testing::InProcessSettled;
using testing::JsonClient;
using testing::JsonResponse;
using testing::ParticipantServer;
using testing::ReceivedCall;
using testing::ScriptedAnswer;

// DTM's client posts to <dtm>/prepareWorkflow, <dtm>/registerBranch and <dtm>/submit, where
// <dtm> is http://host:port/api/dtmsvr.
JsonResponse Dtm(JsonClient& client, const std::string& route, const json& body) {
  return client.Post("/api/dtmsvr/" + route, body.dump());
}

// What Go's TransBase marshals for a workflow: custom_data is a JSON text whose "data" is the
// input as Go encodes bytes (base64).
json PrepareBody(const std::string& gid, const std::string& callback,
                 const std::string& input = "transfer 30") {
  return {{"gid", gid},
          {"trans_type", "workflow"},
          {"custom_data", json{{"name", "wf_transfer"}, {"data", Base64Encode(input)}}.dump()},
          {"query_prepared", callback},
          {"protocol", "http"},
          {"branch_headers", json::object()}};
}

json StepBody(const std::string& gid, const std::string& branch_id, const std::string& op,
              const std::string& status, const std::string& data) {
  return {{"gid", gid}, {"trans_type", "workflow"}, {"data", data}, {"branch_id", branch_id},
          {"op", op},   {"status", status}};
}

json SubmitBody(const std::string& gid, const std::string& status, const std::string& result,
                const std::string& reason = "") {
  return {{"gid", gid},
          {"trans_type", "workflow"},
          {"req_extra",
           {{"status", status}, {"rollback_reason", reason}, {"result", Base64Encode(result)}}}};
}

TEST_CASE("DTM's Go workflow client's calls are answered as DTM answers them", "[http][workflow]") {
  ParticipantServer service;
  InProcessSettled s;
  JsonClient& c = s.client();
  const std::string callback = service.Url("/workflow/resume");
  // Its client reports every step at once: with a minute between resumes, none comes under it
  // however loaded the machine (settled's own is 50 ms here).
  json prepare = PrepareBody("wf-1", callback);
  prepare["retry_interval"] = 60;

  const JsonResponse first = Dtm(c, "prepareWorkflow", prepare);
  REQUIRE(first.status == 200);
  CHECK(first.json["transaction"] ==
        json{{"gid", "wf-1"}, {"status", "prepared"}, {"rollback_reason", ""}, {"result", ""}});
  CHECK(first.json["progresses"] == json::array());
  CHECK(first.headers.count("Settle-Ignored-Fields") == 0);  // every member is DTM's

  REQUIRE(Dtm(c, "registerBranch", StepBody("wf-1", "01", "action", "succeed", "out-1")).status ==
          200);
  REQUIRE(Dtm(c, "registerBranch", StepBody("wf-1", "02", "action", "failed", "no funds")).status ==
          200);
  const JsonResponse again = Dtm(c, "prepareWorkflow", prepare);
  REQUIRE(again.status == 200);
  CHECK(again.json["progresses"] == json::array({{{"branch_id", "01"},
                                                  {"op", "action"},
                                                  {"status", "succeed"},
                                                  {"bin_data", Base64Encode("out-1")}},
                                                 {{"branch_id", "02"},
                                                  {"op", "action"},
                                                  {"status", "failed"},
                                                  {"bin_data", Base64Encode("no funds")}}}));

  REQUIRE(Dtm(c, "registerBranch", StepBody("wf-1", "01", "rollback", "succeed", "")).status ==
          200);
  REQUIRE(Dtm(c, "submit", SubmitBody("wf-1", "failed", "", "no funds")).status == 200);
  CHECK(s.StatusOf("wf-1") == "failed");
  const JsonResponse ended = Dtm(c, "prepareWorkflow", prepare);
  REQUIRE(ended.status == 200);
  CHECK(ended.json["transaction"]["status"] == "failed");
  CHECK(ended.json["transaction"]["rollback_reason"] == "no funds");
  CHECK(ended.json["progresses"].size() == 3);
  CHECK(service.Calls().empty());  // its client finished it: never resumed
}

TEST_CASE("a workflow's result is returned and returned again", "[http][workflow]") {
  ParticipantServer service;
  InProcessSettled s;
  JsonClient& c = s.client();
  const std::string callback = service.Url("/workflow/resume");
  REQUIRE(Dtm(c, "prepareWorkflow", PrepareBody("wf-r", callback)).status == 200);
  REQUIRE(Dtm(c, "submit", SubmitBody("wf-r", "succeed", "receipt 42")).status == 200);
  for (int i = 0; i < 2; ++i) {
    const JsonResponse answer = Dtm(c, "prepareWorkflow", PrepareBody("wf-r", callback));
    REQUIRE(answer.status == 200);
    CHECK(answer.json["transaction"]["status"] == "succeed");
    CHECK(answer.json["transaction"]["result"] == Base64Encode("receipt 42"));
  }
  // The same submit again is answered as the first; another end is refused.
  CHECK(Dtm(c, "submit", SubmitBody("wf-r", "succeed", "receipt 42")).status == 200);
  CHECK(Dtm(c, "submit", SubmitBody("wf-r", "failed", "")).status == 409);
}

TEST_CASE("settled resumes a workflow its client left, and the service finishes it from its log",
          "[http][workflow]") {
  ParticipantServer service;
  InProcessSettled s;
  const std::string callback = service.Url("/workflow/resume");
  // The service, resumed: it reads its progress, skips the recorded step, runs the next and
  // submits, then answers 200, as DTM's workflow.Execute does. Until its first run has stopped
  // (settled resumes a workflow a retry interval, here 50 ms, after its last report, which a
  // loaded machine may let pass), it answers that the workflow is running.
  std::atomic<bool> first_run_stopped{false};
  std::atomic<int> resumes_run{0};
  std::atomic<int> progresses_seen{-1};
  service.SetHandler("/workflow/resume", [&](const ReceivedCall& call) {
    if (!first_run_stopped) return ScriptedAnswer{425, R"({"dtm_result":"ONGOING"})"};
    ++resumes_run;
    JsonClient c(s.port());
    const JsonResponse progress =
        Dtm(c, "prepareWorkflow", PrepareBody(call.query.at("gid"), callback, call.body));
    if (progress.status != 200) return ScriptedAnswer{500, "progress"};
    progresses_seen = static_cast<int>(progress.json["progresses"].size());
    // Step 02 only: 01 is recorded.
    if (Dtm(c, "registerBranch",
            StepBody(call.query.at("gid"), "02", "action", "succeed", "done-2"))
            .status != 200) {
      return ScriptedAnswer{500, "step"};
    }
    if (Dtm(c, "submit", SubmitBody(call.query.at("gid"), "succeed", "ok")).status != 200) {
      return ScriptedAnswer{500, "submit"};
    }
    return ScriptedAnswer{};
  });
  // The first run recorded step 01 and stopped (its process died).
  REQUIRE(Dtm(s.client(), "prepareWorkflow", PrepareBody("wf-2", callback, "")).status == 200);
  REQUIRE(Dtm(s.client(), "registerBranch", StepBody("wf-2", "01", "action", "succeed", "done-1"))
              .status == 200);
  first_run_stopped = true;

  REQUIRE(s.WaitForStatus("wf-2", "succeed"));
  REQUIRE(service.WaitForCalls("/workflow/resume", 1));
  const ReceivedCall resume = service.CallsTo("/workflow/resume")[0];
  // An empty input is still a POST (DTM's becomes a GET).
  CHECK(resume.method == "POST");
  CHECK(resume.body.empty());
  CHECK(resume.query.at("gid") == "wf-2");
  CHECK(resume.query.at("trans_type") == "workflow");
  CHECK(resume.query.at("branch_id") == "00");
  CHECK(resume.query.at("op") == "wf_transfer");
  CHECK(progresses_seen == 1);
  CHECK(resumes_run == 1);  // once it is submitted, never resumed again
}

TEST_CASE("a resume that answers 425 or 409 without a submit is asked again", "[http][workflow]") {
  ParticipantServer service;
  InProcessSettled s;
  const std::string callback = service.Url("/workflow/resume");
  service.Script("/workflow/resume",
                 {ScriptedAnswer{425, R"({"dtm_result":"ONGOING"})"},
                  ScriptedAnswer{409, R"({"dtm_result":"FAILURE"})"}, ScriptedAnswer{500, "boom"}});
  REQUIRE(Dtm(s.client(), "prepareWorkflow", PrepareBody("wf-3", callback, "in")).status == 200);
  REQUIRE(service.WaitForCalls("/workflow/resume", 4));
  CHECK(s.StatusOf("wf-3") == "prepared");
  for (const ReceivedCall& call : service.CallsTo("/workflow/resume")) {
    CHECK(call.body == "in");
  }
  REQUIRE(Dtm(s.client(), "submit", SubmitBody("wf-3", "succeed", "")).status == 200);
  CHECK(s.StatusOf("wf-3") == "succeed");
}

TEST_CASE("workflow requests with bad fields are refused naming the field, and nothing is stored",
          "[http][workflow][bad-input]") {
  ParticipantServer service;
  InProcessSettled s;
  JsonClient& c = s.client();
  const std::string callback = service.Url("/workflow/resume");
  const auto refused = [&](const std::string& route, const std::string& body,
                           const std::string& field) {
    const JsonResponse r = c.Post("/api/dtmsvr/" + route, body);
    CHECK(r.status == 400);
    CHECK_THAT(r.json.value("message", std::string()), Catch::StartsWith(field + ":"));
  };
  json no_name = PrepareBody("wf-bad", callback);
  no_name["custom_data"] = R"({"data":""})";
  refused("prepareWorkflow", no_name.dump(), "custom_data.name");
  json not_base64 = PrepareBody("wf-bad", callback);
  not_base64["custom_data"] = R"({"name":"wf","data":"%%%"})";
  refused("prepareWorkflow", not_base64.dump(), "custom_data.data");
  json not_object = PrepareBody("wf-bad", callback);
  not_object["custom_data"] = "wf";
  refused("prepareWorkflow", not_object.dump(), "custom_data");
  json no_callback = PrepareBody("wf-bad", callback);
  no_callback.erase("query_prepared");
  refused("prepareWorkflow", no_callback.dump(), "query_prepared");
  json saga = PrepareBody("wf-bad", callback);
  saga["trans_type"] = "saga";
  refused("prepareWorkflow", saga.dump(), "trans_type");
  CHECK(s.StatusOf("wf-bad").empty());

  REQUIRE(Dtm(c, "prepareWorkflow", PrepareBody("wf-4", callback)).status == 200);
  refused("registerBranch", StepBody("wf-4", "01", "try", "succeed", "").dump(), "op");
  refused("registerBranch", StepBody("wf-4", "01", "action", "ok", "").dump(), "status");
  refused("registerBranch", StepBody("wf-4", "", "action", "succeed", "").dump(), "branch_id");
  // Bytes that are not UTF-8 cannot be a JSON string: the body is refused, not mangled.
  const std::string raw = R"({"gid":"wf-4","trans_type":"workflow","branch_id":"01","op":"action",)"
                          R"("status":"succeed","data":")" +
                          std::string("\xff\xfe") + R"("})";
  const JsonResponse not_utf8 = c.Post("/api/dtmsvr/registerBranch", raw);
  CHECK(not_utf8.status == 400);
  refused("submit", SubmitBody("wf-4", "done", "").dump(), "req_extra.status");
  json bad_result = SubmitBody("wf-4", "succeed", "");
  bad_result["req_extra"]["result"] = "!!";
  refused("submit", bad_result.dump(), "req_extra.result");
  // A truncated body.
  const std::string whole = StepBody("wf-4", "01", "action", "succeed", "x").dump();
  CHECK(c.Post("/api/dtmsvr/registerBranch", whole.substr(0, whole.size() / 2)).status == 400);

  const JsonResponse progress = Dtm(c, "prepareWorkflow", PrepareBody("wf-4", callback));
  CHECK(progress.json["progresses"] == json::array());
  CHECK(progress.json["transaction"]["status"] == "prepared");
  // A step repeated with other content is a conflict, and the first is kept.
  REQUIRE(Dtm(c, "registerBranch", StepBody("wf-4", "01", "action", "succeed", "a")).status == 200);
  const JsonResponse conflict =
      Dtm(c, "registerBranch", StepBody("wf-4", "01", "action", "succeed", "b"));
  CHECK(conflict.status == 409);
  CHECK(
      Dtm(c, "prepareWorkflow", PrepareBody("wf-4", callback)).json["progresses"][0]["bin_data"] ==
      Base64Encode("a"));
}

}  // namespace
}  // namespace settle
