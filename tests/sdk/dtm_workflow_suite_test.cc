// DTM's own workflow suite (dtm-labs/dtm test/workflow_*_test.go), rebuilt case by case against
// Settle: the settle of this process, the SDK's bank (its accounts in SQLite, each branch in its
// barrier) behind a fault proxy that injects what DTM's busi.MainSwitch does (ONGOING, an
// error, a refusal, once), over HTTP and as gRPC methods, and a service whose workflows run on
// the HTTP or the gRPC link. A resume comes when the case asks for it, as DTM's
// cronTransOnceForwardNow does: resetNextCronTime, then the resume URL's answer. Judged by
// the money and the stored status. The XA cases (XaAction, XaRollback, XaResume) are in
// postgres_xa_workflow_test.cc; TestWorkflowBranchConflict (a step stored twice) is the
// engine's and the API's (a repeated step with other content is 409); and
// TestWorkflowInterceptorOutsideSaga tests a Go gRPC interceptor that has no C++ counterpart.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "eventually.h"
#include "fake_clock.h"
#include "fault_proxy.h"
#include "in_process_settled.h"
#include "sdk_bank.h"
#include "settle/sdk/client.h"
#include "settle/sdk/grpc_branch_server.h"
#include "settle/sdk/grpc_client.h"
#include "settle/sdk/participant.h"
#include "settle/sdk/workflow.h"
#include "temp_dir.h"

namespace settle::sdk {
namespace {

using testing::Fault;
using testing::FaultProxy;
using testing::InProcessSettled;
using testing::SdkBank;

constexpr std::int64_t kOpening = 1000;
constexpr std::int64_t kAmount = 30;

std::string Body(const std::string& account, std::int64_t amount = kAmount) {
  return nlohmann::json{{"account_id", account}, {"amount", amount}}.dump();
}

// DTM's fetchOngoingStep: true (and on to the next) when the count has reached `step`.
struct OngoingSteps {
  std::atomic<int> next{0};
  bool Fetch(int step) {
    int expected = step;
    return next.compare_exchange_strong(expected, step + 1);
  }
};

enum class Link { kHttp, kGrpc };

// One case's world. Members stop in reverse: the resume server before the workflows it runs.
struct Dtm {
  explicit Dtm(Link over = Link::kHttp, const Clock* clock = nullptr)
      : settled([](app::ServerConfig& c) { c.grpc.enabled = true; }, "", "", "", clock) {
    // TransOut answers an error to its next grpc_errors calls, as MainSwitch.SetOnce("ERROR").
    grpc_bank
        .OnAction("/bank.Bank/TransOut",
                  [this, debit = bank.Handler(-1, 0)](const BranchRequest& call) {
                    if (grpc_errors.fetch_sub(1) > 0) {
                      return BranchReply::Error(Status::Unavailable("injected error"));
                    }
                    return debit(call);
                  })
        .OnCompensate("/bank.Bank/TransOutCompensate", bank.Handler(+1, 0))
        .OnAction("/bank.Bank/TransIn", bank.Handler(+1, 0))
        .OnCompensate("/bank.Bank/TransInCompensate", bank.Handler(-1, 0));
    auto grpc_port = grpc_bank.Start("127.0.0.1", 0);
    REQUIRE(grpc_port);
    grpc_bank_port = *grpc_port;
    const std::string http_api =
        "http://127.0.0.1:" + std::to_string(settled.port()) + "/api/settle";
    if (over == Link::kHttp) {
      auto made = Client::Create(http_api);
      REQUIRE(made);
      link = std::move(*made);
    } else {
      GrpcClientOptions options;
      options.http_server = http_api;
      auto made =
          GrpcClient::Create("grpc://127.0.0.1:" + std::to_string(settled.grpc_port()), options);
      REQUIRE(made);
      link = std::move(*made);
    }
    resume_server.OnResume("/resume", [this](const ResumeRequest& resume) {
      BranchReply reply = workflows->Resumer()(resume);
      resumes.fetch_add(1);
      return reply;
    });
    auto port = resume_server.Start("127.0.0.1", 0);
    REQUIRE(port);
    WorkflowsOptions options;
    options.resume_url = "http://127.0.0.1:" + std::to_string(*port) + "/resume";
    options.options.retry_interval = std::chrono::seconds(600);  // resumed when a case asks
    workflows = std::make_unique<Workflows>(*link, options);
  }

  // A saga branch of the bank, over HTTP through the proxy: TransOut or TransIn and its
  // compensation.
  Workflow::SagaUrls Saga(const std::string& name) const {
    return {proxy.Url("/" + name), proxy.Url("/" + name + "Compensate")};
  }
  // The same branch as the bank's gRPC method.
  Workflow::SagaUrls GrpcSaga(const std::string& name) const {
    const std::string base = "127.0.0.1:" + std::to_string(grpc_bank_port) + "/bank.Bank/";
    return {base + name, base + name + "Compensate"};
  }
  Workflow::TccUrls Tcc(const std::string& name) const {
    return {proxy.Url("/" + name + "Try"), proxy.Url("/" + name + "Confirm"),
            proxy.Url("/" + name + "Cancel")};
  }
  // Answers the next call of `path` itself, once, as DTM's MainSwitch.<X>Result.SetOnce does.
  void Once(const std::string& path, int status, const std::string& result) {
    proxy.AddRule({.path = path,
                   .fault = Fault::kRespond,
                   .status = status,
                   .body = R"({"dtm_result":")" + result + R"("})"});
  }

  // DTM's cronTransOnceForwardNow: settled resumes `gid` now; back once the resume answered.
  void ResumeNow(const std::string& gid) {
    const int before = resumes.load();
    REQUIRE(settled.client().PostJson("/api/dtmsvr/resetNextCronTime", {{"gid", gid}}).status ==
            200);
    REQUIRE(testing::Eventually([&] { return resumes.load() > before; }, std::chrono::seconds(30),
                                std::chrono::milliseconds(5)));
  }
  std::string Status(const std::string& gid) { return settled.StatusOf(gid); }
  bool SameBalances() { return bank.Balance("1") == kOpening && bank.Balance("2") == kOpening; }
  bool Moved() {
    return bank.Balance("1") == kOpening - kAmount && bank.Balance("2") == kOpening + kAmount;
  }

  testing::TempDir dir;
  SdkBank bank{dir.File("bank.db"), 2, kOpening};
  FaultProxy proxy{bank.port()};
  std::atomic<int> grpc_errors{0};
  GrpcBranchServer grpc_bank{GrpcBranchServerOptions{.threads = 4}};
  int grpc_bank_port = 0;
  InProcessSettled settled;
  std::unique_ptr<CoordinatorLink> link;
  std::unique_ptr<Workflows> workflows;
  std::atomic<int> resumes{0};
  Participant resume_server{ParticipantOptions{.threads = 2, .io_threads = 1}};
  OngoingSteps ongoing;
  testing::FakeClock* clock = nullptr;  // settled's, when the case gave one
  std::mutex mutex;
  std::vector<std::string> finished;  // what OnFinish saw: "commit" or "rollback"
};

// A step that only has a phase 2, as DTM's wf.NewBranch().OnFinish(...) without a Do.
WorkflowStep OnFinish(Dtm* w) {
  WorkflowStep step{"on-finish",
                    [](const BranchRequest&) -> Result<std::string> { return std::string(); }};
  step.on_commit = [w](const BranchRequest&) {
    std::lock_guard lock(w->mutex);
    w->finished.push_back("commit");
    return Status::Ok();
  };
  step.on_rollback = [w](const BranchRequest&) {
    std::lock_guard lock(w->mutex);
    w->finished.push_back("rollback");
    return Status::Ok();
  };
  return step;
}

// A workflow's code in this file: a free coroutine given the case's world (a lambda that is a
// coroutine must not capture).
using Code = asio::awaitable<Result<std::string>> (*)(Dtm*, Workflow&, std::string);

// Registers `code` as workflow `name` of the case's service.
void Register(Dtm& w, const std::string& name, Code code) {
  REQUIRE(w.workflows
              ->Register(name,
                         [w = &w, code](Workflow& wf, std::string input) {
                           return code(w, wf, std::move(input));
                         })
              .ok());
}

// TestWorkflowNormal, TestWorkflowRollback: OnFinish, then TransOut and TransIn to the payee
// given as the input (9: no such account, the bank refuses).
asio::awaitable<Result<std::string>> FinishOutIn(Dtm* w, Workflow& wf, std::string to) {
  WorkflowStep finish = OnFinish(w);
  Result<std::string> none = co_await wf.Do(finish);
  if (!none) co_return none.status();
  WorkflowStep out = wf.SagaStep("trans-out", w->Saga("TransOut"), Body("1"));
  Result<std::string> paid = co_await wf.Do(out);
  if (!paid) co_return paid.status();
  WorkflowStep in = wf.SagaStep("trans-in", w->Saga("TransIn"), Body(to));
  Result<std::string> credited = co_await wf.Do(in);
  if (!credited) co_return credited.status();
  co_return std::string();
}

TEST_CASE("DTM TestWorkflowNormal: two saga steps succeed and OnFinish commits",
          "[sdk][workflow][dtm]") {
  Dtm w;
  Register(w, "normal", FinishOutIn);
  REQUIRE(w.workflows->Execute("normal", "wf-normal", "2").ok());
  CHECK(w.Status("wf-normal") == "succeed");
  CHECK(w.Moved());
  CHECK(w.finished == std::vector<std::string>{"commit"});
}

TEST_CASE("DTM TestWorkflowRollback: a refused step rolls back the steps before it",
          "[sdk][workflow][dtm]") {
  Dtm w;
  Register(w, "wf-rollback-case", FinishOutIn);
  Result<std::string> failed = w.workflows->Execute("wf-rollback-case", "wf-rollback", "9");
  CHECK(failed.status().code() == StatusCode::kConflict);
  CHECK(w.Status("wf-rollback") == "failed");
  CHECK(w.SameBalances());
  CHECK(w.finished == std::vector<std::string>{"rollback"});
}

// TestWorkflowTcc, TestWorkflowTccRollback: TransOut and TransIn as TCC steps.
asio::awaitable<Result<std::string>> TccOutIn(Dtm* w, Workflow& wf, std::string) {
  WorkflowStep out = wf.TccStep("trans-out", w->Tcc("TransOut"), Body("1"));
  Result<std::string> frozen = co_await wf.Do(out);
  if (!frozen) co_return frozen.status();
  WorkflowStep in = wf.TccStep("trans-in", w->Tcc("TransIn"), Body("2"));
  Result<std::string> credited = co_await wf.Do(in);
  if (!credited) co_return credited.status();
  co_return std::string();
}

TEST_CASE("DTM TestWorkflowTcc: TCC steps confirm after the workflow succeeds",
          "[sdk][workflow][dtm][tcc]") {
  Dtm w;
  Register(w, "tcc", TccOutIn);
  REQUIRE(w.workflows->Execute("tcc", "wf-tcc", "").ok());
  CHECK(w.Status("wf-tcc") == "succeed");
  CHECK(w.Moved());
  CHECK(w.bank.Frozen("1") == 0);
}

TEST_CASE("DTM TestWorkflowTccRollback: a Try answering FAILURE cancels every Try",
          "[sdk][workflow][dtm][tcc]") {
  Dtm w;
  w.Once("/TransInTry", 409, "FAILURE");
  Register(w, "tcc-rollback", TccOutIn);
  CHECK(w.workflows->Execute("tcc-rollback", "wf-tcc-rb", "").status().code() ==
        StatusCode::kConflict);
  CHECK(w.Status("wf-tcc-rb") == "failed");
  CHECK(w.SameBalances());
  CHECK(w.bank.Frozen("1") == 0);
  CHECK(w.proxy.Seen("/TransOutCancel") == 1);
  CHECK(w.proxy.Seen("/TransInCancel") == 1);
}

// TestWorkflowError, TestWorkflowOngoing, TestWorkflowResumeSkip, TestWorkflowRet: a local
// step counting its runs, then TransOut; the result is the workflow's own bytes.
struct Counted {
  Dtm* w;
  std::atomic<int> runs{0};
};
asio::awaitable<Result<std::string>> CountThenOut(Counted* c, Workflow& wf, std::string) {
  WorkflowStep count{"count", [c](const BranchRequest&) -> Result<std::string> {
                       c->runs.fetch_add(1);
                       return std::string();
                     }};
  Result<std::string> counted = co_await wf.Do(count);
  if (!counted) co_return counted.status();
  WorkflowStep out = wf.SagaStep("trans-out", c->w->Saga("TransOut"), Body("1"));
  Result<std::string> paid = co_await wf.Do(out);
  if (!paid) co_return paid.status();
  co_return std::string("result of workflow");
}

void RegisterCounted(Dtm& w, Counted& c, const std::string& name) {
  REQUIRE(
      w.workflows
          ->Register(name, [c = &c](Workflow& wf,
                                    std::string in) { return CountThenOut(c, wf, std::move(in)); })
          .ok());
}

TEST_CASE("DTM TestWorkflowError: a step's error stops the run, and the resume finishes it",
          "[sdk][workflow][dtm]") {
  Dtm w;
  Counted c{&w};
  RegisterCounted(w, c, "error");
  w.Once("/TransOut", 500, "ERROR");
  CHECK(w.workflows->Execute("error", "wf-error", "").status().code() == StatusCode::kUnavailable);
  CHECK(w.Status("wf-error") == "prepared");
  w.ResumeNow("wf-error");
  CHECK(w.Status("wf-error") == "succeed");
  CHECK(w.bank.Balance("1") == kOpening - kAmount);
}

TEST_CASE("DTM TestWorkflowOngoing: a step answering ONGOING is called again on the resume",
          "[sdk][workflow][dtm]") {
  Dtm w;
  Counted c{&w};
  RegisterCounted(w, c, "ongoing");
  w.Once("/TransOut", 425, "ONGOING");
  CHECK(w.workflows->Execute("ongoing", "wf-ongoing", "").status().code() == StatusCode::kPending);
  w.ResumeNow("wf-ongoing");
  CHECK(w.Status("wf-ongoing") == "succeed");
  CHECK(w.bank.Balance("1") == kOpening - kAmount);
  CHECK(w.proxy.Seen("/TransOut") == 2);
}

TEST_CASE("DTM TestWorkflowResumeSkip: the resume does not run a recorded step again",
          "[sdk][workflow][dtm]") {
  Dtm w;
  Counted c{&w};
  RegisterCounted(w, c, "resume-skip");
  w.Once("/TransOut", 425, "ONGOING");
  CHECK_FALSE(w.workflows->Execute("resume-skip", "wf-skip", "").ok());
  w.ResumeNow("wf-skip");
  CHECK(w.Status("wf-skip") == "succeed");
  CHECK(c.runs.load() == 1);
}

TEST_CASE("DTM TestWorkflowRet: the workflow's result is answered, and answered again",
          "[sdk][workflow][dtm]") {
  Dtm w;
  Counted c{&w};
  RegisterCounted(w, c, "ret");
  Result<std::string> first = w.workflows->Execute("ret", "wf-ret", "");
  REQUIRE(first);
  CHECK(*first == "result of workflow");
  Result<std::string> again = w.workflows->Execute("ret", "wf-ret", "");
  REQUIRE(again);
  CHECK(*again == "result of workflow");
  CHECK(w.Status("wf-ret") == "succeed");
  CHECK(w.proxy.Seen("/TransOut") == 1);
}

// TestWorkflowSimpleResume: the handler itself answers ONGOING on its first run.
asio::awaitable<Result<std::string>> OngoingFirst(Dtm* w, Workflow& wf, std::string) {
  if (w->ongoing.Fetch(0)) co_return Status::Pending("not yet");
  WorkflowStep out = wf.SagaStep("trans-out", w->Saga("TransOut"), Body("1"));
  Result<std::string> paid = co_await wf.Do(out);
  if (!paid) co_return paid.status();
  co_return std::string();
}

TEST_CASE("DTM TestWorkflowSimpleResume: a handler answering ONGOING is resumed to the end",
          "[sdk][workflow][dtm]") {
  Dtm w;
  Register(w, "simple-resume", OngoingFirst);
  CHECK(w.workflows->Execute("simple-resume", "wf-simple", "").status().code() ==
        StatusCode::kPending);
  w.ResumeNow("wf-simple");
  CHECK(w.Status("wf-simple") == "succeed");
}

// The gRPC cases: TransOut and TransIn as the bank's gRPC methods, on the gRPC link; `to` the
// payee (9: no such account, the bank refuses).
asio::awaitable<Result<std::string>> GrpcOutIn(Dtm* w, Workflow& wf, std::string to) {
  WorkflowStep out = wf.SagaStep("trans-out", w->GrpcSaga("TransOut"), Body("1"));
  Result<std::string> paid = co_await wf.Do(out);
  if (!paid) co_return paid.status();
  WorkflowStep in = wf.SagaStep("trans-in", w->GrpcSaga("TransIn"), Body(to));
  Result<std::string> credited = co_await wf.Do(in);
  if (!credited) co_return credited.status();
  co_return std::string();
}

TEST_CASE("DTM TestWorkflowGrpcSimple and GrpcRollback: gRPC steps, the refused one rolled back",
          "[sdk][workflow][dtm][grpc]") {
  Dtm w(Link::kGrpc);
  Register(w, "grpc", GrpcOutIn);
  CHECK(w.workflows->Execute("grpc", "wf-grpc-fail", "9").status().code() == StatusCode::kConflict);
  CHECK(w.Status("wf-grpc-fail") == "failed");
  CHECK(w.SameBalances());
  REQUIRE(w.workflows->Execute("grpc", "wf-grpc-ok", "2").ok());
  CHECK(w.Status("wf-grpc-ok") == "succeed");
  CHECK(w.Moved());
}

TEST_CASE("DTM TestWorkflowGrpcError: a gRPC step's error is resumed to the end",
          "[sdk][workflow][dtm][grpc]") {
  Dtm w(Link::kGrpc);
  Register(w, "grpc-error", GrpcOutIn);
  w.grpc_errors = 1;
  CHECK(w.workflows->Execute("grpc-error", "wf-grpc-error", "2").status().code() ==
        StatusCode::kUnavailable);
  CHECK(w.Status("wf-grpc-error") == "prepared");
  w.ResumeNow("wf-grpc-error");
  CHECK(w.Status("wf-grpc-error") == "succeed");
  CHECK(w.Moved());
}

// TestWorkflowMixed: a gRPC step and HTTP TCC steps in one workflow, on the gRPC link.
asio::awaitable<Result<std::string>> Mixed(Dtm* w, Workflow& wf, std::string) {
  WorkflowStep out = wf.SagaStep("trans-out", w->GrpcSaga("TransOut"), Body("1"));
  Result<std::string> paid = co_await wf.Do(out);
  if (!paid) co_return paid.status();
  WorkflowStep half = wf.TccStep("trans-in-half", w->Tcc("TransIn"), Body("2", kAmount / 2));
  Result<std::string> first = co_await wf.Do(half);
  if (!first) co_return first.status();
  WorkflowStep rest = wf.SagaStep("trans-in-rest", w->Saga("TransIn"), Body("2", kAmount / 2));
  Result<std::string> second = co_await wf.Do(rest);
  if (!second) co_return second.status();
  co_return std::string();
}

TEST_CASE("DTM TestWorkflowMixed: gRPC and HTTP steps, saga and TCC, in one workflow",
          "[sdk][workflow][dtm][grpc]") {
  Dtm w(Link::kGrpc);
  Register(w, "mixed", Mixed);
  REQUIRE(w.workflows->Execute("mixed", "wf-mixed", "").ok());
  CHECK(w.Status("wf-mixed") == "succeed");
  CHECK(w.Moved());
}

// TestWorkflowGrpcRollbackResume: ONGOING at five points (before the first step, after each
// action, inside each rollback); each resume goes one point further, and the fifth ends it
// failed with the money where it was.
asio::awaitable<Result<std::string>> OngoingEverywhere(Dtm* w, Workflow& wf, std::string) {
  if (w->ongoing.Fetch(0)) co_return Status::Pending("ongoing 0");
  WorkflowStep out = wf.SagaStep("trans-out", w->GrpcSaga("TransOut"), Body("1"));
  out.on_rollback = [w, compensate = out.on_rollback](const BranchRequest& call) {
    return w->ongoing.Fetch(4) ? Status::Pending("ongoing 4") : compensate(call);
  };
  Result<std::string> paid = co_await wf.Do(out);
  if (w->ongoing.Fetch(1)) co_return Status::Pending("ongoing 1");
  if (!paid) co_return paid.status();
  WorkflowStep in = wf.SagaStep("trans-in", w->GrpcSaga("TransIn"), Body("9"));
  in.on_rollback = [w, compensate = in.on_rollback](const BranchRequest& call) {
    return w->ongoing.Fetch(3) ? Status::Pending("ongoing 3") : compensate(call);
  };
  Result<std::string> credited = co_await wf.Do(in);
  if (w->ongoing.Fetch(2)) co_return Status::Pending("ongoing 2");
  if (!credited) co_return credited.status();
  co_return std::string();
}

TEST_CASE("DTM TestWorkflowGrpcRollbackResume: ONGOING at five points, resumed to a rollback",
          "[sdk][workflow][dtm][grpc]") {
  Dtm w(Link::kGrpc);
  Register(w, "rollback-resume", OngoingEverywhere);
  CHECK(w.workflows->Execute("rollback-resume", "wf-rb-resume", "").status().code() ==
        StatusCode::kPending);
  CHECK(w.Status("wf-rb-resume") == "prepared");
  for (int resume = 1; resume <= 4; ++resume) {
    INFO("resume " << resume);
    w.ResumeNow("wf-rb-resume");
    CHECK(w.Status("wf-rb-resume") == "prepared");
  }
  w.ResumeNow("wf-rb-resume");
  CHECK(w.Status("wf-rb-resume") == "failed");
  CHECK(w.SameBalances());
  CHECK(w.ongoing.next.load() == 5);
}

// Not DTM's (its server never times a workflow out): a step that ends after the workflow's
// timeout_to_fail cannot be recorded; the SDK takes that refusal as the step failing, so the
// workflow rolls back, the step included, and ends failed instead of retrying for ever.
asio::awaitable<Result<std::string>> SlowOut(Dtm* w, Workflow& wf, std::string) {
  WorkflowStep out = wf.SagaStep("trans-out", w->Saga("TransOut"), Body("1"));
  out.action = [w, pay = out.action](const BranchRequest& call) {
    Result<std::string> paid = pay(call);
    w->clock->Advance(std::chrono::seconds(11));  // the step took longer than the workflow may
    return paid;
  };
  Result<std::string> paid = co_await wf.Do(out);
  if (!paid) co_return paid.status();
  co_return std::string();
}

TEST_CASE("a step recorded after the workflow's timeout_to_fail fails it, and it rolls back",
          "[sdk][workflow]") {
  testing::FakeClock clock(SystemClock().Now());
  Dtm w(Link::kHttp, &clock);
  w.clock = &clock;
  WorkflowsOptions options;
  options.resume_url = "http://127.0.0.1:1/resume";
  options.options.timeout_to_fail = std::chrono::seconds(10);
  Workflows timed(*w.link, options);
  REQUIRE(timed
              .Register("slow",
                        [w = &w](Workflow& wf, std::string input) {
                          return SlowOut(w, wf, std::move(input));
                        })
              .ok());
  Result<std::string> failed = timed.Execute("slow", "wf-slow", "");
  CHECK(failed.status().code() == StatusCode::kConflict);
  CHECK_THAT(failed.status().message(), Catch::Contains("timed out (timeout_to_fail 10 s)"));
  CHECK(w.Status("wf-slow") == "failed");
  CHECK(w.SameBalances());  // the debit that could not be recorded was compensated
  CHECK(w.proxy.Seen("/TransOutCompensate") == 1);
}

}  // namespace
}  // namespace settle::sdk
