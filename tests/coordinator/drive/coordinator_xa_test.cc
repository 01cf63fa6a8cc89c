// XA through the coordinator, as settled assembles it, with a fake clock and scripted
// participants: the coordinator only finishes each registered branch's prepared local
// transaction, at the branch's one phase-2 URL.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "coordinator_harness.h"
#include "settle/drive/coordinator.h"

namespace settle::drive {
namespace {

using testing::CoordinatorHarness;
using testing::Unknown;
using Names = std::vector<std::string>;

constexpr Duration kSecond{1000};

void StartXa(CoordinatorHarness& h, const std::string& gid, int branches,
             engine::RequestOptions options = {}) {
  engine::PrepareRequest prepare{gid, options, TransType::kXa};
  REQUIRE(h.coordinator().Prepare(prepare).ok());
  for (int i = 0; i < branches; ++i) {
    const std::string id = BranchIdForIndex(static_cast<std::size_t>(i));
    engine::RegisterBranchRequest branch{
        gid, id, "", "", "", TransType::kXa, "http://db" + id + "/xa"};
    REQUIRE(h.coordinator().RegisterBranch(branch).ok());
  }
}

TEST_CASE("a submitted XA commits every registered branch at its phase-2 URL",
          "[coordinator][xa]") {
  CoordinatorHarness h;
  StartXa(h, "x1", 2);
  CHECK(h.caller().calls().empty());
  h.caller().Script("02", BranchOp::kCommit, {Unknown()});
  REQUIRE(h.coordinator().Submit(engine::SubmitRequest{"x1", TransType::kXa, {}, {}}).ok());
  CHECK(h.StatusOf("x1") == GlobalStatus::kSubmitted);  // 02 is retried
  h.Advance(kSecond);
  CHECK(h.StatusOf("x1") == GlobalStatus::kSucceed);
  CHECK(h.caller().CallNames() == Names{"01:commit", "02:commit", "02:commit"});
  CHECK(h.caller().calls()[0].url == "http://db01/xa");
  CHECK(h.caller().calls()[0].trans_type == TransType::kXa);
}

TEST_CASE("an aborted XA rolls back every registered branch", "[coordinator][xa]") {
  CoordinatorHarness h;
  StartXa(h, "x1", 2);
  engine::AbortRequest abort{"x1", "branch 02 failed", false, TransType::kXa};
  REQUIRE(h.coordinator().Abort(abort).ok());
  const auto tx = h.Load("x1");
  CHECK(tx.global.status == GlobalStatus::kFailed);
  CHECK(tx.global.rollback_reason == "branch 02 failed");
  CHECK(h.caller().CallNames() == Names{"01:rollback", "02:rollback"});
  CHECK(h.caller().calls()[1].url == "http://db02/xa");
}

TEST_CASE("an XA nobody submits is rolled back at timeout_to_fail, even after a restart",
          "[coordinator][xa][crash]") {
  CoordinatorHarness h;
  engine::RequestOptions options;
  options.timeout_to_fail = 10 * kSecond;
  StartXa(h, "x1", 1, options);
  h.Restart();
  h.Advance(9 * kSecond);
  CHECK(h.StatusOf("x1") == GlobalStatus::kPrepared);
  h.Advance(kSecond);
  CHECK(h.StatusOf("x1") == GlobalStatus::kFailed);
  CHECK(h.caller().CallNames() == Names{"01:rollback"});
}

TEST_CASE("XA and TCC branches cannot be registered with each other's transactions",
          "[coordinator][xa]") {
  CoordinatorHarness h;
  StartXa(h, "x1", 1);
  engine::RegisterBranchRequest tcc_branch{"x1", "02", "", "http://p/confirm", "http://p/cancel"};
  const Status refused = h.coordinator().RegisterBranch(tcc_branch);
  CHECK(refused.code() == StatusCode::kConflict);
  CHECK_THAT(refused.message(), Catch::Contains("xa transaction, not tcc"));

  REQUIRE(h.coordinator().Prepare({"t1", {}}).ok());
  engine::RegisterBranchRequest xa_branch{"t1", "01", "", "", "", TransType::kXa, "http://db/xa"};
  CHECK(h.coordinator().RegisterBranch(xa_branch).code() == StatusCode::kConflict);
  CHECK(h.coordinator().Submit(engine::SubmitRequest{"t1", TransType::kXa, {}, {}}).code() ==
        StatusCode::kConflict);
}

}  // namespace
}  // namespace settle::drive
