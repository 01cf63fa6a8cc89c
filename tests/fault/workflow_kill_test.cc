// The bank transfer written as a workflow (examples/bank, bank-workflow: two TCC steps) with
// real processes: settled, two bank-participants behind fault proxies, and the workflow's
// service, killed with SIGKILL while one of its calls is out (held by a proxy, then let through
// to the bank) and started again on the same port. settled resumes the workflow there; the
// recorded steps are not called again, the interrupted call is repeated (the bank's barrier
// takes it for a duplicate), and the money moves exactly once.
#include <catch2/catch.hpp>

#include <signal.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
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

// A transfer's input as bank-workflow takes it: the banks as it reaches them, through their
// proxies.
std::string InputOf(FaultWorld& w, const Transfer& t) {
  return nlohmann::json{{"from_bank", w.proxy(t.from_bank).Url("")},
                        {"from", t.from_account},
                        {"to_bank", w.proxy(t.to_bank).Url("")},
                        {"to", t.to_account},
                        {"amount", t.amount}}
      .dump();
}

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

  const std::string input = InputOf(w, t);
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

// Under load: 4 clients post 15 transfers each (from either bank to the other), while the service
// is killed three times, each time once the banks have seen a further, randomly drawn number of
// Trys (a seeded draw: the points differ from kill to kill, the run is repeatable), and started
// again at once. Every transfer settled stored ends, each exactly once at both banks.
TEST_CASE("a workflow service killed with SIGKILL three times under load moves each transfer once",
          "[fault][workflow]") {
  FaultWorld w;
  WorkflowService service(w.dir().File("workflow.log"), w.settled().port());
  constexpr int kClients = 4;
  constexpr int kPerClient = 15;
  std::mutex mu;
  std::vector<Transfer> transfers;
  for (int i = 0; i < kClients * kPerClient; ++i) {
    const int from = i % 2;
    transfers.push_back(Transfer{.gid = w.NewGid(),
                                 .from_bank = from,
                                 .from_account = std::to_string(1 + i % 5),
                                 .to_bank = 1 - from,
                                 .to_account = std::to_string(1 + (i / 2) % 5),
                                 .amount = 1 + i % 7});
    w.Record(transfers.back());
  }
  std::atomic<int> answered{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      for (int i = c * kPerClient; i < (c + 1) * kPerClient; ++i) {
        const Transfer& t = transfers[i];
        JsonClient http(service.port());
        // No answer while the service is down: the transfer, if it was stored, is settled's to
        // resume; the client goes on with the next one.
        if (http.Post("/api/transfers?gid=" + t.gid, InputOf(w, t)).status == 200) {
          answered.fetch_add(1);
        }
      }
    });
  }
  std::mt19937 draw(20261129);
  std::size_t trys = 0;
  int kills = 0;
  for (int kill = 0; kill < 3; ++kill) {
    trys += 2 + draw() % 8;
    const auto seen = [&] {
      return w.proxy(0).Seen("/api/TransOutTry") + w.proxy(1).Seen("/api/TransOutTry");
    };
    if (!Eventually([&] { return seen() >= trys; }, seconds(60), milliseconds(1))) break;
    service.Kill();
    ++kills;
    service.Start();
  }
  for (std::thread& client : clients) client.join();
  CHECK(kills == 3);
  INFO(answered.load() << " of " << transfers.size() << " transfers answered 200");

  // Every transfer settled knows of ends (resumed by settled where its run was killed), each
  // branch applied once: the barrier rows of a committed one are its Trys and Confirms.
  REQUIRE(w.WaitUntilAllFinished(seconds(120)));
  int committed = 0;
  for (const Transfer& t : transfers) {
    INFO("gid " << t.gid);
    const std::optional<GlobalStatus> status = w.StatusOf(t.gid);
    if (status != GlobalStatus::kSucceed) continue;
    ++committed;
    CHECK(w.BarrierRows(t.from_bank, t.gid) ==
          std::map<std::string, std::string>{{"try", "try"}, {"confirm", "confirm"}});
    CHECK(w.BarrierRows(t.to_bank, t.gid) ==
          std::map<std::string, std::string>{{"try", "try"}, {"confirm", "confirm"}});
  }
  CHECK(committed >= answered.load());
  CHECK(committed > 0);
  w.CheckInvariants();
}

}  // namespace
}  // namespace settle::testing
