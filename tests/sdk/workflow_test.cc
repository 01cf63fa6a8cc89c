// Workflows (settle/sdk/workflow.h) against the real settled: each step recorded once and
// handed back on a later run, phase 2 in reverse, the end submitted, a run that stopped
// finished by settled's resume through Participant::OnResume, and a handler whose steps moved
// told so instead of replayed wrong.
#include "settle/sdk/workflow.h"

#include <catch2/catch.hpp>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "json_client.h"
#include "participant_server.h"
#include "sdk_test_support.h"
#include "settle/sdk/participant.h"

namespace settle::sdk {
namespace {

using settle::testing::ParticipantServer;
using namespace settle::sdk::test;

// What the steps of the test's workflow did, across runs.
struct Shop {
  std::mutex mutex;
  int reserved = 0;         // times the reserve step ran
  int pay_attempts = 0;     // times the pay step ran
  int pay_unavailable = 0;  // runs whose pay step errs before it answers
  bool decline = false;     // the pay step's business says no
  bool renamed = false;     // the handler's first step has another name
  std::vector<std::string> phase2;
  std::string ship_url;  // the HTTP step's participant
};

// The workflow: reserve (local, with its commit and rollback), pay (local), ship (an HTTP call
// through the link). A free coroutine given its state, called by a lambda that is not one.
asio::awaitable<Result<std::string>> Order(Shop* shop, Workflow& wf, std::string input) {
  WorkflowStep reserve;
  reserve.name = shop->renamed ? "charge" : "reserve";
  reserve.action = [shop](const BranchRequest& step) -> Result<std::string> {
    std::lock_guard lock(shop->mutex);
    ++shop->reserved;
    return "stock-" + step.branch_id;
  };
  reserve.on_commit = [shop](const BranchRequest& step) {
    std::lock_guard lock(shop->mutex);
    shop->phase2.push_back(std::string(ToString(step.op)) + " " + step.branch_id);
    return Status::Ok();
  };
  reserve.on_rollback = reserve.on_commit;
  Result<std::string> reserved = co_await wf.Do(reserve);
  if (!reserved) co_return reserved.status();

  WorkflowStep pay;
  pay.name = "pay";
  pay.action = [shop](const BranchRequest&) -> Result<std::string> {
    std::lock_guard lock(shop->mutex);
    ++shop->pay_attempts;
    if (shop->pay_unavailable > 0) {
      --shop->pay_unavailable;
      return Status::Unavailable("card network down");
    }
    if (shop->decline) return Status::Conflict("card declined");
    return std::string("paid");
  };
  pay.on_rollback = reserve.on_commit;  // run after a decline too, as a saga compensates
  Result<std::string> paid = co_await wf.Do(pay);
  if (!paid) co_return paid.status();

  WorkflowStep ship = wf.CallStep("ship", shop->ship_url, input);
  ship.on_commit = wf.CallPhase2(shop->ship_url, input);
  Result<std::string> shipped = co_await wf.Do(ship);
  if (!shipped) co_return shipped.status();
  co_return *reserved + "+" + *paid + "+" + input;
}

// A service serving the resume URL, its workflows on the coordinator's HTTP link.
struct Service {
  explicit Service(RealCoordinator& c, std::chrono::seconds retry_interval) {
    participant.OnResume("/workflow/resume", [this](const ResumeRequest& resume) {
      return workflows->Resumer()(resume);
    });
    auto started = participant.Start("127.0.0.1", 0);
    REQUIRE(started);
    port = *started;
    WorkflowsOptions options;
    options.resume_url = "http://127.0.0.1:" + std::to_string(port) + "/workflow/resume";
    options.options.retry_interval = retry_interval;
    workflows = std::make_unique<Workflows>(*c.client, options);
    REQUIRE(workflows
                ->Register("order",
                           [shop = &shop](Workflow& wf, std::string input) {
                             return Order(shop, wf, std::move(input));
                           })
                .ok());
  }
  ~Service() { participant.Stop(); }
  Shop shop;
  Participant participant;
  int port = 0;
  std::unique_ptr<Workflows> workflows;
};

// The shipping participant, settled, and the service, in the order they must stop in reverse.
struct Running {
  explicit Running(std::chrono::seconds retry_interval) : s(c, retry_interval) {
    s.shop.ship_url = shipping.Url("/ship");
  }
  ParticipantServer shipping;
  RealCoordinator c;
  Service s;
};

std::vector<std::string> Phase2(Shop& shop) {
  std::lock_guard lock(shop.mutex);
  return shop.phase2;
}

TEST_CASE("a workflow runs each step once, commits in reverse, and its result is kept",
          "[sdk][workflow]") {
  Running r(std::chrono::seconds(60));
  ParticipantServer& shipping = r.shipping;
  RealCoordinator& c = r.c;
  Service& s = r.s;

  Result<std::string> done = s.workflows->Execute("order", "wf-1", "book");
  REQUIRE(done);
  CHECK(*done == "stock-01+paid+book");
  CHECK(Phase2(s.shop) == std::vector<std::string>{"commit 01"});
  // The HTTP step went out as a branch call, and its phase 2 after it.
  const auto calls = shipping.Calls();
  REQUIRE(calls.size() == 2);
  CheckBranchCall(calls[0], "wf-1", TransType::kWorkflow, "03", "action", "book");
  CheckBranchCall(calls[1], "wf-1", TransType::kWorkflow, "03", "commit", "book");
  auto stored = WaitForStatus(*c.client, "wf-1", GlobalStatus::kSucceed);
  REQUIRE(stored);
  CHECK(stored->status == GlobalStatus::kSucceed);

  // Run again: the stored result, nothing run.
  Result<std::string> again = s.workflows->Execute("order", "wf-1", "book");
  REQUIRE(again);
  CHECK(*again == "stock-01+paid+book");
  CHECK(s.shop.reserved == 1);
  CHECK(s.shop.pay_attempts == 1);
  CHECK(shipping.Calls().size() == 2);
}

TEST_CASE("a step the business refuses fails the workflow: it and the steps before it roll back",
          "[sdk][workflow]") {
  Running r(std::chrono::seconds(60));
  ParticipantServer& shipping = r.shipping;
  RealCoordinator& c = r.c;
  Service& s = r.s;
  s.shop.decline = true;

  Result<std::string> failed = s.workflows->Execute("order", "wf-2", "book");
  REQUIRE_FALSE(failed);
  CHECK(failed.status().code() == StatusCode::kConflict);
  CHECK(failed.status().message() == "card declined");
  CHECK(Phase2(s.shop) == std::vector<std::string>{"rollback 02", "rollback 01"});
  CHECK(shipping.Calls().empty());
  auto stored = WaitForStatus(*c.client, "wf-2", GlobalStatus::kFailed);
  REQUIRE(stored);
  CHECK(stored->rollback_reason == "card declined");

  Result<std::string> again = s.workflows->Execute("order", "wf-2", "book");
  CHECK(again.status().message() == "card declined");
  CHECK(s.shop.pay_attempts == 1);
  CHECK(Phase2(s.shop).size() == 2);
}

TEST_CASE("a run that stops mid-way is finished by settled's resume, its recorded steps not run",
          "[sdk][workflow]") {
  Running r(std::chrono::seconds(1));
  RealCoordinator& c = r.c;
  Service& s = r.s;
  s.shop.pay_unavailable = 1;

  Result<std::string> stopped = s.workflows->Execute("order", "wf-3", "book");
  REQUIRE_FALSE(stopped);
  CHECK(stopped.status().code() == StatusCode::kUnavailable);
  // settled calls the resume URL a retry interval after the last step it recorded.
  auto stored = WaitForStatus(*c.client, "wf-3", GlobalStatus::kSucceed);
  REQUIRE(stored);
  CHECK(stored->status == GlobalStatus::kSucceed);
  CHECK(s.shop.reserved == 1);
  CHECK(s.shop.pay_attempts == 2);
  CHECK(Phase2(s.shop) == std::vector<std::string>{"commit 01"});
  Result<std::string> result = s.workflows->Execute("order", "wf-3", "book");
  REQUIRE(result);
  CHECK(*result == "stock-01+paid+book");
}

TEST_CASE("a handler that asks for its steps in another order than it ran is told, not replayed",
          "[sdk][workflow]") {
  Running r(std::chrono::seconds(60));
  RealCoordinator& c = r.c;
  Service& s = r.s;
  s.shop.pay_unavailable = 1;
  REQUIRE_FALSE(s.workflows->Execute("order", "wf-4", "book"));

  s.shop.renamed = true;
  Result<std::string> moved = s.workflows->Execute("order", "wf-4", "book");
  REQUIRE_FALSE(moved);
  CHECK(moved.status().code() == StatusCode::kInternal);
  CHECK_THAT(moved.status().message(),
             Catch::Contains("recorded as \"reserve\"") && Catch::Contains("\"charge\""));
  CHECK(s.shop.reserved == 1);
  auto tx = c.client->Query("wf-4");
  REQUIRE(tx);
  REQUIRE(tx->has_value());
  CHECK((*tx)->status == GlobalStatus::kPrepared);
  CHECK((*tx)->branches.size() == 2);  // the resume and the one step recorded
}

TEST_CASE("a resume URL called for a workflow settled does not know starts nothing",
          "[sdk][workflow]") {
  Running r(std::chrono::seconds(60));
  RealCoordinator& c = r.c;
  Service& s = r.s;
  settle::testing::JsonClient resume(s.port);
  const auto forged =
      resume.Post("/workflow/resume?gid=wf-forged&trans_type=workflow&branch_id=00&op=order",
                  "ten thousand books");
  CHECK(forged.status == 409);
  CHECK_THAT(forged.body, Catch::Contains("no workflow wf-forged to resume"));
  // Calls that are no resume at all are refused before the handler, naming the parameter.
  const auto as_op =
      resume.Post("/workflow/resume?gid=wf-forged&trans_type=workflow&branch_id=00&op=Confirm", "");
  CHECK(as_op.status == 409);
  CHECK_THAT(as_op.body, Catch::Contains("op: names a branch op"));
  const auto as_saga =
      resume.Post("/workflow/resume?gid=wf-forged&trans_type=saga&branch_id=00&op=order", "");
  CHECK(as_saga.status == 409);
  CHECK_THAT(as_saga.body, Catch::Contains("trans_type: this URL resumes workflows"));
  auto tx = c.client->Query("wf-forged");
  REQUIRE(tx);
  CHECK_FALSE(tx->has_value());
  CHECK(s.shop.reserved == 0);
}

TEST_CASE("a workflow's name is checked when it is registered", "[sdk][workflow]") {
  auto client = MakeClient("http://127.0.0.1:1/api/settle");
  Workflows workflows(*client, {});
  auto handler = [](Workflow&, std::string input) -> asio::awaitable<Result<std::string>> {
    co_return input;
  };
  CHECK(workflows.Register("order", handler).ok());
  CHECK(workflows.Register("order", handler).code() == StatusCode::kInvalidArgument);
  CHECK_THAT(workflows.Register("Confirm", handler).message(), Catch::Contains("branch op"));
  CHECK(workflows.Register("", handler).code() == StatusCode::kInvalidArgument);
  CHECK(workflows.Execute("nobody", "g", "").status().code() == StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace settle::sdk
