// Fault scenarios with real processes: settled, two bank-participants behind fault proxies.
// Each ends with the invariants (FaultWorld::CheckInvariants) and the barrier case it expects.
#include <catch2/catch.hpp>

#include <chrono>
#include <future>

#include "eventually.h"
#include "fault_world.h"

namespace settle::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// Bank 1 has no such account: its TransIn Try (or action) answers 409.
constexpr const char* kNoSuchAccount = "999";

// Each polls every 20 ms, for at most 30 seconds.
bool WaitForStatus(FaultWorld& w, const std::string& gid, GlobalStatus status) {
  return Eventually([&] { return w.StatusOf(gid) == status; }, seconds(30), milliseconds(20));
}

bool WaitForStuck(FaultWorld& w, const std::string& gid) {
  return Eventually(
      [&] {
        auto info = w.client()->Query(gid);
        return info && info->has_value() && (*info)->stuck;
      },
      seconds(30), milliseconds(20));
}

TEST_CASE("a Try answering FAILURE aborts the TCC and every registered branch is cancelled",
          "[fault]") {
  FaultWorld w;
  Transfer t{.gid = w.NewGid(), .to_account = kNoSuchAccount};
  auto outcome = w.Run(t);
  REQUIRE(outcome);
  CHECK_FALSE(outcome->committed());
  REQUIRE(WaitForStatus(w, t.gid, GlobalStatus::kFailed));
  // Bank 0's Try ran, so its cancel released the reservation; bank 1's Try failed and rolled
  // back, so its cancel was an empty rollback.
  CHECK(w.BarrierRows(0, t.gid) ==
        std::map<std::string, std::string>{{"try", "try"}, {"cancel", "cancel"}});
  CHECK(w.BarrierRows(1, t.gid) ==
        std::map<std::string, std::string>{{"try", "cancel"}, {"cancel", "cancel"}});
  w.CheckInvariants();
}

TEST_CASE("a Try whose answer is lost makes the client abort, and the cancel really releases",
          "[fault]") {
  FaultWorld w;
  w.proxy(0).AddRule({.path = "/api/TransOutTry", .fault = Fault::kDropResponse});
  Transfer t{.gid = w.NewGid()};
  auto outcome = w.Run(t);
  REQUIRE(outcome);
  CHECK_FALSE(outcome->committed());
  REQUIRE(WaitForStatus(w, t.gid, GlobalStatus::kFailed));
  // The Try ran (the bank reserved) although the client never heard it; the cancel released.
  CHECK(w.BarrierRows(0, t.gid) ==
        std::map<std::string, std::string>{{"try", "try"}, {"cancel", "cancel"}});
  CHECK(w.Account(0, "1") == std::pair<long long, long long>{10000, 0});
  w.CheckInvariants();
}

TEST_CASE("a Try held past timeout_to_fail arrives after its empty rollback and is rejected",
          "[fault]") {
  FaultWorld w;
  w.proxy(0).AddRule({.path = "/api/TransOutTry", .fault = Fault::kHold});
  sdk::TransOptions options;
  options.timeout_to_fail = seconds(1);
  options.request_timeout = seconds(60);  // the client waits for its held Try
  Transfer t{.gid = w.NewGid()};
  auto running = std::async(std::launch::async, [&] { return w.Run(t, options); });
  REQUIRE(w.proxy(0).WaitForHeld("/api/TransOutTry", 1));
  // The coordinator times the TCC out and cancels: the Try has not arrived, so the cancel is
  // an empty rollback.
  REQUIRE(WaitForStatus(w, t.gid, GlobalStatus::kFailed));
  CHECK(w.BarrierRows(0, t.gid) ==
        std::map<std::string, std::string>{{"try", "cancel"}, {"cancel", "cancel"}});
  w.proxy(0).Release("/api/TransOutTry");  // now the hanging Try arrives
  auto outcome = running.get();
  CHECK((!outcome || !outcome->committed()));
  CHECK(w.proxy(0).Seen("/api/TransOutTry") == 1);
  CHECK(w.Account(0, "1") == std::pair<long long, long long>{10000, 0});  // nothing reserved
  w.CheckInvariants();
}

TEST_CASE("duplicated confirm, cancel, action and compensate deliveries take effect once",
          "[fault]") {
  FaultWorld w;
  for (const char* path : {"/api/TransOutConfirm", "/api/TransInConfirm", "/api/TransOutCancel",
                           "/api/TransOut", "/api/TransIn", "/api/TransOutCompensate"}) {
    for (int bank : {0, 1}) {
      w.proxy(bank).AddRule({.path = path, .fault = Fault::kDuplicate, .times = -1});
    }
  }
  sdk::TransOptions wait;
  wait.wait_result = true;
  CHECK(w.Run({.tcc = true, .amount = 11}, wait)->status == GlobalStatus::kSucceed);
  CHECK(w.Run({.tcc = true, .to_account = kNoSuchAccount, .amount = 13}, wait)->status ==
        GlobalStatus::kFailed);
  CHECK(w.Run({.tcc = false, .amount = 17}, wait)->status == GlobalStatus::kSucceed);
  CHECK(w.Run({.tcc = false, .to_account = kNoSuchAccount, .amount = 19}, wait)->status ==
        GlobalStatus::kFailed);
  // Every one of those calls reached its bank twice: at bank 0 a confirm, a cancel, two
  // actions and a compensate; at bank 1 a confirm and two actions.
  CHECK(w.proxy(0).FaultsApplied() == 5);
  CHECK(w.proxy(1).FaultsApplied() == 3);
  CHECK(w.Account(0, "1").first == 10000 - 11 - 17);
  w.CheckInvariants();
}

TEST_CASE("a confirm answering 500 three times is retried until it succeeds", "[fault]") {
  FaultWorld w;
  w.proxy(1).AddRule({.path = "/api/TransInConfirm",
                      .fault = Fault::kRespond,
                      .times = 3,
                      .status = 500,
                      .body = "database is down"});
  Transfer t{.gid = w.NewGid()};
  REQUIRE(w.Run(t));
  REQUIRE(WaitForStatus(w, t.gid, GlobalStatus::kSucceed));
  auto info = w.client()->Query(t.gid);
  REQUIRE(info);
  for (const auto& b : (*info)->branches) {
    if (b.branch_id == "02" && b.op == BranchOp::kConfirm) {
      CHECK(b.attempts == 4);
      // Its success cleared last_error; the three failures are its history.
      CHECK(b.last_error.empty());
    }
  }
  w.CheckInvariants();
}

TEST_CASE("a participant down for a while: its transaction is flagged stuck, then completes",
          "[fault]") {
  WorldOptions options;
  options.settled_args = {"--retry-interval", "100ms", "--retry-max", "300ms",
                          "--stuck-after",    "2",     "--log-level", "warn"};
  FaultWorld w(options);
  w.proxy(1).AddRule({.path = "/api/TransInConfirm", .fault = Fault::kHold});
  Transfer t{.gid = w.NewGid()};
  REQUIRE(w.Run(t));
  REQUIRE(w.proxy(1).WaitForHeld("/api/TransInConfirm", 1));
  w.bank(1).Kill();  // bank 1 goes down while phase 2 is under way
  w.proxy(1).Release("/api/TransInConfirm");
  REQUIRE(WaitForStuck(w, t.gid));
  CHECK(w.StatusOf(t.gid) == GlobalStatus::kSubmitted);
  w.RestartBank(1);
  REQUIRE(WaitForStatus(w, t.gid, GlobalStatus::kSucceed));
  auto info = w.client()->Query(t.gid);
  REQUIRE(info);
  CHECK_FALSE((*info)->stuck);
  w.CheckInvariants();
}

TEST_CASE("settled killed during TCC phase 2 finishes the transaction after a restart",
          "[fault][crash]") {
  FaultWorld w;
  w.proxy(0).AddRule({.path = "/api/TransOutConfirm", .fault = Fault::kHold});
  Transfer t{.gid = w.NewGid()};
  REQUIRE(w.Run(t));
  REQUIRE(w.proxy(0).WaitForHeld("/api/TransOutConfirm", 1));
  w.KillSettled();
  w.proxy(0).Release("/api/TransOutConfirm");  // the bank confirms; settled never hears it
  REQUIRE(w.proxy(0).WaitForSeen("/api/TransOutConfirm", 1));
  w.RestartSettled();
  REQUIRE(WaitForStatus(w, t.gid, GlobalStatus::kSucceed));
  CHECK(w.proxy(0).Seen("/api/TransOutConfirm") >= 2);  // resent after the restart
  CHECK(w.BarrierRows(0, t.gid).at("confirm") == "confirm");
  w.CheckInvariants();
}

TEST_CASE("settled killed during saga compensation finishes the rollback after a restart",
          "[fault][crash]") {
  FaultWorld w;
  w.proxy(0).AddRule({.path = "/api/TransOutCompensate", .fault = Fault::kHold});
  Transfer t{.gid = w.NewGid(), .tcc = false, .to_account = kNoSuchAccount};
  REQUIRE(w.Run(t));
  REQUIRE(w.proxy(0).WaitForHeld("/api/TransOutCompensate", 1));
  w.KillSettled();
  w.proxy(0).Release("/api/TransOutCompensate");
  w.RestartSettled();
  REQUIRE(WaitForStatus(w, t.gid, GlobalStatus::kFailed));
  CHECK(w.BarrierRows(0, t.gid).at("compensate") == "compensate");
  CHECK(w.Account(0, "1").first == 10000);
  w.CheckInvariants();
}

TEST_CASE("a participant killed around a Try and restarted on its database loses nothing",
          "[fault][crash]") {
  FaultWorld w;
  SECTION("the Try ran and the bank died before answering") {
    w.proxy(0).AddRule({.path = "/api/TransOutTry", .fault = Fault::kDropResponse});
    Transfer t{.gid = w.NewGid()};
    auto outcome = w.Run(t);
    REQUIRE(outcome);
    CHECK_FALSE(outcome->committed());
    w.bank(0).Kill();
    CHECK(w.BarrierRows(0, t.gid).at("try") == "try");  // the reservation is on disk
    w.RestartBank(0);
    REQUIRE(WaitForStatus(w, t.gid, GlobalStatus::kFailed));
    CHECK(w.Account(0, "1") == std::pair<long long, long long>{10000, 0});
  }
  SECTION("the bank died before the Try reached it") {
    w.proxy(0).AddRule({.path = "/api/TransOutTry", .fault = Fault::kHold});
    Transfer t{.gid = w.NewGid()};
    auto running = std::async(std::launch::async, [&] { return w.Run(t); });
    REQUIRE(w.proxy(0).WaitForHeld("/api/TransOutTry", 1));
    w.bank(0).Kill();
    w.proxy(0).Release("/api/TransOutTry");  // reaches a dead bank: the client aborts
    auto outcome = running.get();
    REQUIRE(outcome);
    CHECK_FALSE(outcome->committed());
    w.RestartBank(0);
    REQUIRE(WaitForStatus(w, t.gid, GlobalStatus::kFailed));
    CHECK(w.BarrierRows(0, t.gid).at("try") == "cancel");  // an empty rollback
  }
  w.CheckInvariants();
}

}  // namespace
}  // namespace settle::testing
