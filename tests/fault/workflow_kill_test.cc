// The bank transfer written as a workflow (examples/bank, bank-workflow: two TCC steps) with
// real processes: settled, two bank-participants behind fault proxies, and the workflow's
// service, killed with SIGKILL while one of its calls is out (held by a proxy, then let through
// to the bank) and started again on the same port. settled resumes the workflow there; the
// recorded steps are not called again, the interrupted call is repeated (the bank's barrier
// takes it for a duplicate), and the money moves exactly once.
#include <catch2/catch.hpp>

#include <signal.h>

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "child_process.h"
#include "eventually.h"
#include "fault_world.h"
#include "json_client.h"
#include "settled_process.h"

namespace settle::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// bank-workflow on a port of its own, kept across restarts: settled stores its resume URL.
class WorkflowService {
 public:
  WorkflowService(const std::string& log, int settled_port)
      : log_(log),
        port_(UnusedPort()),
        args_{BANK_WORKFLOW_BINARY,
              "--coordinator",
              "http://127.0.0.1:" + std::to_string(settled_port),
              "--port",
              std::to_string(port_),
              "--retry-interval",
              "1"} {
    Start();
  }
  int port() const { return port_; }
  void Start() {
    process_ = std::make_unique<ChildProcess>(args_, log_);
    REQUIRE_FALSE(process_->WaitForLine("bank-workflow listening on", seconds(20)).empty());
  }
  void Kill() {
    process_->Signal(SIGKILL);
    process_->Wait(seconds(10));
    process_.reset();
  }

 private:
  std::string log_;
  int port_;
  std::vector<std::string> args_;
  std::unique_ptr<ChildProcess> process_;
};

// Where the service is killed: a call of `bank`'s `path` (the op its barrier row names) held
// at the bank's proxy.
struct KillPoint {
  int bank;
  std::string path;
  std::string op;
};

TEST_CASE("a workflow's service killed with SIGKILL mid-call moves the money exactly once",
          "[fault][workflow]") {
  const KillPoint point =
      GENERATE(KillPoint{0, "/api/TransOutTry", "try"}, KillPoint{1, "/api/TransInTry", "try"},
               KillPoint{1, "/api/TransInConfirm", "confirm"},
               KillPoint{0, "/api/TransOutConfirm", "confirm"});
  INFO("killed while " << point.path << " is out");
  FaultWorld w;
  WorkflowService service(w.dir().File("workflow.log"), w.settled().port());
  const Transfer t{.gid = w.NewGid(), .amount = 30};
  w.Record(t);
  w.proxy(point.bank).AddRule({.path = point.path, .fault = Fault::kHold});

  // The banks as the service reaches them: through their proxies.
  const std::string input = nlohmann::json{
      {"from_bank", w.proxy(0).Url("")},
      {"from", t.from_account},
      {"to_bank", w.proxy(1).Url("")},
      {"to", t.to_account},
      {"amount", t.amount}}.dump();
  auto posted = std::async(std::launch::async, [&] {
    JsonClient http(service.port());
    return http.Post("/api/transfers?gid=" + t.gid, input).status;
  });
  REQUIRE(w.proxy(point.bank).WaitForHeld(point.path, 1, seconds(30)));
  service.Kill();
  CHECK(posted.get() == 0);  // no answer: the service died under it

  // The call it made reaches the bank after all, and is applied there.
  w.proxy(point.bank).ClearRules();
  w.proxy(point.bank).Release(point.path);
  REQUIRE(Eventually([&] { return w.BarrierRows(point.bank, t.gid).count(point.op) == 1; },
                     seconds(30), milliseconds(20)));

  service.Start();
  REQUIRE(Eventually([&] { return w.StatusOf(t.gid) == GlobalStatus::kSucceed; }, seconds(60),
                     milliseconds(50)));
  // Every call made once, the interrupted one twice (the second a duplicate for the barrier).
  for (const auto& [bank, path] :
       std::vector<std::pair<int, std::string>>{{0, "/api/TransOutTry"},
                                                {1, "/api/TransInTry"},
                                                {1, "/api/TransInConfirm"},
                                                {0, "/api/TransOutConfirm"}}) {
    INFO(path);
    CHECK(w.proxy(bank).Seen(path) == (path == point.path ? 2u : 1u));
  }
  for (int bank : {0, 1}) {
    CHECK(w.BarrierRows(bank, t.gid) ==
          std::map<std::string, std::string>{{"try", "try"}, {"confirm", "confirm"}});
  }
  CHECK(w.Account(0, t.from_account) == std::pair<long long, long long>{10000 - 30, 0});
  CHECK(w.Account(1, t.to_account) == std::pair<long long, long long>{10000 + 30, 0});
  w.CheckInvariants();
}

}  // namespace
}  // namespace settle::testing
