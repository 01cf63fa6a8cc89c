// A registered branch is either refused or driven: the timeout's decision (the driver's pass)
// and a client's registerBranch serialize on the transaction, and what an earlier version left
// behind (a failed TCC or XA with a registered branch never cancelled) is repaired.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "coordinator_harness.h"
#include "settle/app/retention.h"
#include "settle/drive/coordinator.h"
#include "settle/drive/rollback_repair.h"
#include "settle/engine/decision.h"

namespace settle::drive {
namespace {

using testing::CoordinatorHarness;
using testing::Unknown;
using Names = std::vector<std::string>;

constexpr Duration kSecond{1000};

engine::RegisterBranchRequest Branch(const std::string& gid, const std::string& id,
                                     TransType type = TransType::kTcc) {
  engine::RegisterBranchRequest r{gid, id, R"({"amount":30})", "http://p/confirm" + id,
                                  "http://p/cancel" + id};
  r.trans_type = type;
  if (type == TransType::kXa) r.url = "http://p/xa" + id;
  return r;
}

// Prepares a TCC (or XA) that times out after 10 s, with branch "01" registered.
void PrepareWithTimeout(CoordinatorHarness& h, const std::string& gid,
                        TransType type = TransType::kTcc) {
  engine::PrepareRequest prepare{gid, {}};
  prepare.trans_type = type;
  prepare.options.timeout_to_fail = 10 * kSecond;
  REQUIRE(h.coordinator().Prepare(prepare).ok());
  REQUIRE(h.coordinator().RegisterBranch(Branch(gid, "01", type)).ok());
}

// What a version with the race left: a TCC failed by its timeout while branch "01" (and "02")
// was registered, its cancels never made.
void StoreAsTheRaceLeftIt(CoordinatorHarness& h, const std::string& gid, int branches) {
  REQUIRE(h.coordinator().Prepare({gid, {}}).ok());
  for (int i = 1; i <= branches; ++i) {
    REQUIRE(h.coordinator().RegisterBranch(Branch(gid, BranchIdForIndex(i - 1))).ok());
  }
  storage::GlobalRecord g = h.Load(gid).global;
  engine::ApplyStatusChange(g, GlobalStatus::kAborting, "timeout_to_fail: not submitted",
                            h.clock().Now());
  engine::ApplyStatusChange(g, GlobalStatus::kFailed, "", h.clock().Now());
  storage::WriteBatch failed;
  failed.Add(storage::UpdateGlobal{g, GlobalStatus::kPrepared});
  REQUIRE(h.store().Commit(failed).ok());
}

TEST_CASE(
    "a branch registered between the timeout's read and its commit is cancelled with the "
    "others",
    "[coordinator][tcc][race]") {
  CoordinatorHarness h;
  PrepareWithTimeout(h, "g1");
  // The timeout's pass has read the transaction with branch 01 only; 02 registers before the
  // pass commits its abort, as a client's registerBranch on another connection would.
  bool registered = false;
  h.faulty_store().BeforeNextCommit(
      [&h, &registered] { registered = h.coordinator().RegisterBranch(Branch("g1", "02")).ok(); });

  h.Advance(10 * kSecond);
  // The abort was refused for the branch it did not count; the next pass reads it.
  CHECK(h.StatusOf("g1") == GlobalStatus::kPrepared);
  h.Advance(Duration(0));

  REQUIRE(registered);
  CHECK(h.StatusOf("g1") == GlobalStatus::kFailed);
  CHECK(h.caller().CallNames() == Names{"01:cancel", "02:cancel"});
}

TEST_CASE("an XA branch registered between the timeout's read and its commit is rolled back",
          "[coordinator][xa][race]") {
  CoordinatorHarness h;
  PrepareWithTimeout(h, "x1", TransType::kXa);
  bool registered = false;
  h.faulty_store().BeforeNextCommit([&h, &registered] {
    registered = h.coordinator().RegisterBranch(Branch("x1", "02", TransType::kXa)).ok();
  });

  h.Advance(10 * kSecond);
  h.Advance(Duration(0));

  REQUIRE(registered);
  CHECK(h.StatusOf("x1") == GlobalStatus::kFailed);
  CHECK(h.caller().CallNames() == Names{"01:rollback", "02:rollback"});
}

TEST_CASE("a registration after the timeout's abort is refused and its branch never called",
          "[coordinator][tcc][race]") {
  CoordinatorHarness h;
  PrepareWithTimeout(h, "g1");
  h.Advance(10 * kSecond);
  REQUIRE(h.StatusOf("g1") == GlobalStatus::kFailed);

  const Status late = h.coordinator().RegisterBranch(Branch("g1", "02"));

  CHECK(late.code() == StatusCode::kConflict);
  CHECK(h.caller().CallNames() == Names{"01:cancel"});
  CHECK(h.Load("g1").branches.size() == 2);
}

TEST_CASE(
    "a failed TCC an earlier version left with registered branches never cancelled is "
    "cancelled and stays failed",
    "[coordinator][tcc][repair]") {
  CoordinatorHarness h;
  StoreAsTheRaceLeftIt(h, "left", 2);
  RollbackRepair repair(h.store(), h.scheduler(), h.clock());

  REQUIRE(repair.Sweep().value() == 1);
  h.Drain();

  const storage::Transaction tx = h.Load("left");
  CHECK(tx.global.status == GlobalStatus::kFailed);
  CHECK_THAT(tx.global.rollback_reason, Catch::Contains("timeout_to_fail"));
  CHECK(h.caller().CallNames() == Names{"01:cancel", "02:cancel"});
  for (const auto& row : tx.branches) {
    if (row.op == BranchOp::kCancel) CHECK(row.status == BranchStatus::kSucceed);
  }
  // Done: found no more, called no more.
  CHECK(repair.Sweep().value() == 0);
  h.Advance(60 * kSecond);
  CHECK(h.caller().calls().size() == 2);
}

TEST_CASE("a repair whose cancel fails retries it with backoff, and after a restart",
          "[coordinator][tcc][repair]") {
  CoordinatorHarness h;
  h.caller().Script("01", BranchOp::kCancel, {Unknown(), Unknown()});
  StoreAsTheRaceLeftIt(h, "left", 1);
  {
    RollbackRepair repair(h.store(), h.scheduler(), h.clock());
    REQUIRE(repair.Sweep().value() == 1);
    h.Drain();
  }
  CHECK(h.caller().CallNames() == Names{"01:cancel"});
  CHECK(h.StatusOf("left") == GlobalStatus::kFailed);

  // Restarted before the retry: the first sweep of the new process finds it again, and its
  // retries keep their stored times.
  h.Restart();
  RollbackRepair repair(h.store(), h.scheduler(), h.clock());
  REQUIRE(repair.Sweep().value() == 1);
  h.Advance(Duration(0));
  CHECK(h.caller().calls().size() == 1);
  h.Advance(60 * kSecond);
  h.Advance(120 * kSecond);

  CHECK(h.caller().CallNames() == Names{"01:cancel", "01:cancel", "01:cancel"});
  CHECK(h.StatusOf("left") == GlobalStatus::kFailed);
  CHECK(repair.Sweep().value() == 0);
}

TEST_CASE("what an operator's forceStop left undone stays undone", "[coordinator][repair]") {
  CoordinatorHarness h;
  PrepareWithTimeout(h, "stopped");
  REQUIRE(h.coordinator().ForceStop("stopped", "by hand", "ops").ok());
  RollbackRepair repair(h.store(), h.scheduler(), h.clock());

  CHECK(repair.Sweep().value() == 0);
  h.Advance(60 * kSecond);

  CHECK(h.Load("stopped").global.force_stopped);
  CHECK(h.caller().calls().empty());
}

TEST_CASE("retention deletes a repaired transaction only once its cancels are made",
          "[coordinator][repair]") {
  CoordinatorHarness h;
  StoreAsTheRaceLeftIt(h, "left", 1);
  app::Retention retention(h.store(), h.clock(),
                           app::RetentionSettings{kSecond, 10, kSecond, Duration(0)});
  h.clock().Advance(60 * kSecond);
  CHECK(retention.DeleteBatch().value() == 0);

  RollbackRepair repair(h.store(), h.scheduler(), h.clock());
  REQUIRE(repair.Sweep().value() == 1);
  h.Advance(Duration(0));

  CHECK(retention.DeleteBatch().value() == 1);
  CHECK(h.caller().CallNames() == Names{"01:cancel"});
}

}  // namespace
}  // namespace settle::drive
