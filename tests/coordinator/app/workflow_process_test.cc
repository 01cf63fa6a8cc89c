// Workflows against a real settled process (on a SQLite file, or in
// settle_postgres_process_tests on PostgreSQL) and a real workflow service on 127.0.0.1 that
// runs DTM's workflow protocol: kill -9 of settled between steps loses no recorded step, and the
// restarted coordinator resumes the workflow, whose service then runs each step once
// (docs/protocol.md §3.16).
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "final_status.h"
#include "json_client.h"
#include "participant_server.h"
#include "restartable_settled.h"
#include "settle/core/base64.h"

namespace settle {
namespace {

using nlohmann::json;
using testing::JsonClient;
using testing::JsonResponse;
using testing::ParticipantServer;
using testing::ReceivedCall;
using testing::ScriptedAnswer;

const std::vector<std::string> kArgs = {"--retry-interval", "100ms", "--retry-max", "400ms",
                                        "--log-level",      "warn"};

// A settled on a database of its own, restartable as after kill -9.
struct Coordinator : testing::RestartableSettled {
  Coordinator() : RestartableSettled(kArgs) {}
};

// DTM's Go workflow client, as it speaks to the coordinator over HTTP, running the workflow
// "transfer" of two steps (01: debit, 02: credit) on input `input`: it reads its progress,
// runs each step its log does not record (counting the runs), records it, and submits.
class TransferWorkflow {
 public:
  TransferWorkflow(Coordinator& c, std::string callback) : c_(c), callback_(std::move(callback)) {}

  json Prepare(const std::string& gid, const std::string& input) {
    JsonClient client(c_.port);
    const json body = {
        {"gid", gid},
        {"trans_type", "workflow"},
        {"custom_data", json{{"name", "transfer"}, {"data", Base64Encode(input)}}.dump()},
        {"query_prepared", callback_},
        {"retry_interval", 1}};
    const JsonResponse r = client.Post("/api/dtmsvr/prepareWorkflow", body.dump());
    return r.status == 200 ? r.json : json();
  }

  // One run, up to `steps` steps (a run that stops early is a process that died). True when it
  // recorded what it ran (and submitted, if it reached the end).
  bool Run(const std::string& gid, const std::string& input, int steps = 2) {
    const json progress = Prepare(gid, input);
    if (progress.is_null()) return false;
    if (progress["transaction"]["status"] != "prepared") return true;
    std::map<std::string, bool> recorded;
    for (const json& p : progress["progresses"]) recorded[p["branch_id"]] = true;
    JsonClient client(c_.port);
    for (int i = 1; i <= steps; ++i) {
      const std::string id = "0" + std::to_string(i);
      if (recorded[id]) continue;
      {
        std::lock_guard lock(mu_);
        ++runs_[id];
      }
      const json step = {{"gid", gid},     {"trans_type", "workflow"}, {"branch_id", id},
                         {"op", "action"}, {"status", "succeed"},      {"data", "done " + id}};
      if (client.Post("/api/dtmsvr/registerBranch", step.dump()).status != 200) return false;
    }
    if (steps < 2) return true;
    const json submit = {
        {"gid", gid},
        {"trans_type", "workflow"},
        {"req_extra",
         {{"status", "succeed"}, {"rollback_reason", ""}, {"result", Base64Encode("paid")}}}};
    return client.Post("/api/dtmsvr/submit", submit.dump()).status == 200;
  }

  int RunsOf(const std::string& step) {
    std::lock_guard lock(mu_);
    return runs_[step];
  }

 private:
  Coordinator& c_;
  std::string callback_;
  std::mutex mu_;
  std::map<std::string, int> runs_;
};

std::string WaitForEnd(Coordinator& c, const std::string& gid) {
  JsonClient client(c.port);
  return testing::WaitForFinalStatus(client, gid,
                                     std::chrono::steady_clock::now() + std::chrono::seconds(30));
}

TEST_CASE(
    "kill -9 of settled between a workflow's steps: resumed after the restart, each step once",
    "[process][workflow][crash]") {
  ParticipantServer service;
  Coordinator c;
  TransferWorkflow workflow(c, service.Url("/workflow/resume"));
  // The service, resumed, runs the workflow from its log, as DTM's workflow.Execute does.
  service.SetHandler("/workflow/resume", [&](const ReceivedCall& call) {
    const bool ran = workflow.Run(call.query.at("gid"), call.body);
    return ran ? ScriptedAnswer{} : ScriptedAnswer{500, "not finished"};
  });
  // The first run records step 01, then its process dies.
  REQUIRE(workflow.Run("wf-1", "transfer 30", 1));
  c.KillAndRestart();

  CHECK(WaitForEnd(c, "wf-1") == "succeed");
  CHECK(workflow.RunsOf("01") == 1);
  CHECK(workflow.RunsOf("02") == 1);
  REQUIRE(service.CountCalls("/workflow/resume") >= 1);
  const ReceivedCall resume = service.CallsTo("/workflow/resume")[0];
  CHECK(resume.method == "POST");
  CHECK(resume.body == "transfer 30");
  CHECK(resume.query.at("op") == "transfer");

  // Its result and its log are answered ever after, across another crash.
  c.KillAndRestart();
  const json answer = workflow.Prepare("wf-1", "transfer 30");
  CHECK(answer["transaction"]["status"] == "succeed");
  CHECK(answer["transaction"]["result"] == Base64Encode("paid"));
  CHECK(answer["progresses"].size() == 2);
}

TEST_CASE("kill -9 of settled while a resume is in flight: resumed again, each step still once",
          "[process][workflow][crash]") {
  ParticipantServer service;
  Coordinator c;
  TransferWorkflow workflow(c, service.Url("/workflow/resume"));
  // The first resume is held (its service is slow) while settled dies; later ones run it.
  std::atomic<bool> first{true};
  service.SetHandler("/workflow/resume", [&](const ReceivedCall& call) {
    if (first.exchange(false)) return ScriptedAnswer{.held = true};
    const bool ran = workflow.Run(call.query.at("gid"), call.body);
    return ran ? ScriptedAnswer{} : ScriptedAnswer{500, "not finished"};
  });
  REQUIRE_FALSE(workflow.Prepare("wf-2", "in").is_null());
  REQUIRE(service.WaitForHeld(1));
  c.KillAndRestart();
  service.Release();
  CHECK(WaitForEnd(c, "wf-2") == "succeed");
  CHECK(workflow.RunsOf("01") == 1);
  CHECK(workflow.RunsOf("02") == 1);
}

}  // namespace
}  // namespace settle
