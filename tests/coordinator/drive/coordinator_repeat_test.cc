// A repeated prepare or submit is taken only when it is the request that created the
// transaction; one that differs is refused naming the difference and changes nothing
// (docs/protocol.md §3.15). Unknown members are ignored and logged, or refused under
// strict_requests (§1.5). Through the coordinator as settled assembles it.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "coordinator_harness.h"
#include "message_requests.h"
#include "settle/drive/coordinator.h"
#include "settle/engine/transaction_types.h"
#include "transaction_builder.h"

namespace settle::drive {
namespace {

using testing::CoordinatorHarness;
using testing::SubmitOfPrepared;
using testing::Unknown;

constexpr Duration kSecond{1000};

engine::SubmitRequest Saga(const std::string& gid, std::vector<std::string> actions) {
  engine::SubmitRequest r{gid, TransType::kSaga, {}, {}};
  for (const std::string& action : actions) {
    r.steps.push_back({"http://p/" + action, "http://p/" + action + "Compensate"});
    r.payloads.push_back(R"({"amount":30})");
  }
  return r;
}

engine::PrepareRequest Message(const std::string& gid, std::vector<std::string> actions) {
  engine::PrepareRequest r;
  r.gid = gid;
  r.trans_type = TransType::kMsg;
  for (const std::string& action : actions) {
    r.steps.push_back({"http://p/" + action, ""});
    r.payloads.push_back(R"({"points":1})");
  }
  r.query_prepared = "http://shop/query_prepared";
  return r;
}

TEST_CASE("a saga submitted again with other steps or payloads is refused and runs as stored",
          "[coordinator][repeat][saga]") {
  CoordinatorHarness h;
  h.caller().Script("01", BranchOp::kAction, {Unknown()});  // keeps it submitted a while
  REQUIRE(h.coordinator().Submit(Saga("s1", {"a", "b"})).ok());
  REQUIRE(h.StatusOf("s1") == GlobalStatus::kSubmitted);
  const storage::Transaction before = h.Load("s1");

  const Status other_steps = h.coordinator().Submit(Saga("s1", {"a", "c"}));
  CHECK(other_steps.code() == StatusCode::kConflict);
  CHECK_THAT(other_steps.message(),
             Catch::StartsWith("steps[1]: differs from the request that created gid s1"));
  engine::SubmitRequest other_payload = Saga("s1", {"a", "b"});
  other_payload.payloads[0] = R"({"amount":31})";
  CHECK_THAT(h.coordinator().Submit(other_payload).message(), Catch::StartsWith("payloads[0]:"));
  engine::SubmitRequest more_retries = Saga("s1", {"a", "b"});
  more_retries.options.retry_limit = 5;
  CHECK_THAT(h.coordinator().Submit(more_retries).message(),
             Catch::StartsWith("retry_limit: 5 here, 0 in the request"));
  // Nothing changed, nothing was called again.
  CHECK(h.Load("s1").global == before.global);
  CHECK(h.Load("s1").branches == before.branches);
  CHECK(h.caller().calls().size() == 1);

  // The same request again, waiting for its result this time, is the harmless duplicate.
  h.clock().Advance(kSecond);  // step 1's retry is due
  engine::SubmitRequest same = Saga("s1", {"a", "b"});
  same.options.wait_result = true;
  CHECK(h.coordinator().Submit(same).ok());
  CHECK(h.StatusOf("s1") == GlobalStatus::kSucceed);
  CHECK(h.caller().calls().back().url == "http://p/b");
}

TEST_CASE("a message prepared again with another query_prepared is refused",
          "[coordinator][repeat][msg]") {
  CoordinatorHarness h;
  const engine::PrepareRequest prepare = Message("m1", {"points"});
  REQUIRE(h.coordinator().Prepare(prepare).ok());
  CHECK(h.coordinator().Prepare(prepare).ok());

  engine::PrepareRequest other = prepare;
  other.query_prepared = "http://elsewhere/query_prepared";
  const Status refused = h.coordinator().Prepare(other);
  CHECK(refused.code() == StatusCode::kConflict);
  CHECK_THAT(refused.message(), Catch::StartsWith("query_prepared: differs"));
  CHECK(h.Load("m1").branches.at(0).url == "http://shop/query_prepared");
}

TEST_CASE("a message's submit must carry its prepare's steps, and may add its delay",
          "[coordinator][repeat][msg]") {
  CoordinatorHarness h;
  const engine::PrepareRequest prepare = Message("m1", {"points", "ship"});
  REQUIRE(h.coordinator().Prepare(prepare).ok());

  engine::SubmitRequest other = SubmitOfPrepared(prepare);
  other.steps.pop_back();
  other.payloads.pop_back();
  const Status refused = h.coordinator().Submit(other);
  CHECK(refused.code() == StatusCode::kConflict);
  CHECK_THAT(refused.message(), Catch::StartsWith("steps: 1 here, 2 in the request"));
  CHECK(h.StatusOf("m1") == GlobalStatus::kPrepared);  // not submitted, nothing delivered
  CHECK(h.caller().calls().empty());

  // What DTM's Go, Node and C# SDKs send: the prepare's body with the delay added, and
  // query_prepared left out by a client that did not prepare it itself.
  engine::SubmitRequest with_delay = SubmitOfPrepared(prepare);
  with_delay.options.custom_data = R"({"delay":1})";
  with_delay.query_prepared.clear();
  REQUIRE(h.coordinator().Submit(with_delay).ok());
  CHECK(h.StatusOf("m1") == GlobalStatus::kSucceed);
  CHECK(h.caller().calls().size() == 2);
}

TEST_CASE("a TCC prepared again with other options is refused, its submit is not compared",
          "[coordinator][repeat][tcc]") {
  CoordinatorHarness h;
  engine::PrepareRequest prepare{"t1", {}};
  prepare.options.timeout_to_fail = 20 * kSecond;
  REQUIRE(h.coordinator().Prepare(prepare).ok());
  CHECK(h.coordinator().Prepare(prepare).ok());
  engine::PrepareRequest other = prepare;
  other.options.timeout_to_fail = 60 * kSecond;
  CHECK_THAT(h.coordinator().Prepare(other).message(),
             Catch::StartsWith("timeout_to_fail: 60 here, 20 in the request that created gid t1"));
  CHECK(h.Load("t1").global.options.timeout_to_fail == 20 * kSecond);

  // A TCC's submit carries no content of the transaction: its options are not compared.
  engine::SubmitRequest submit{"t1", TransType::kTcc, {}, {}};
  CHECK(h.coordinator().Submit(submit).ok());
}

TEST_CASE("a transaction stored before fingerprints takes a repeat as it did",
          "[coordinator][repeat][upgrade]") {
  CoordinatorHarness h;
  // As a version without fingerprints stored it: the same rows, no request_fingerprint.
  auto built = engine::BuildSubmitted(Saga("old", {"a"}), {}, {}, h.clock().Now(), "");
  REQUIRE(built);
  storage::WriteBatch insert;
  insert.Add(storage::InsertGlobal{built->global});
  for (const storage::BranchRecord& row : built->branches) insert.Add(storage::InsertBranch{row});
  REQUIRE(h.store().Commit(insert).ok());

  engine::SubmitRequest other = Saga("old", {"z"});
  other.options.wait_result = true;
  CHECK(h.coordinator().Submit(other).ok());  // driven from the stored rows, as before
  CHECK(h.StatusOf("old") == GlobalStatus::kSucceed);
  CHECK(h.caller().calls().at(0).url == "http://p/a");
}

TEST_CASE("unknown members are ignored, and refused naming the first under strict_requests",
          "[coordinator][fields]") {
  engine::SubmitRequest saga = Saga("s1", {"a"});
  saga.unread_fields = {"protocol", "retry_count", "wait_resutl", "steps[0].actoin"};
  SECTION("by default") {
    CoordinatorHarness h;
    CHECK(h.coordinator().Submit(saga).ok());
    CHECK(h.StatusOf("s1") == GlobalStatus::kSucceed);
  }
  SECTION("strict") {
    CoordinatorSettings strict;
    strict.strict_requests = true;
    CoordinatorHarness h({Duration(60'000), 10}, strict);
    const Status refused = h.coordinator().Submit(saga);
    CHECK(refused.code() == StatusCode::kInvalidArgument);
    CHECK_THAT(refused.message(), Catch::StartsWith("wait_resutl: unknown field"));
    CHECK(h.coordinator().Query("s1")->has_value() == false);
    // DTM's members alone are not unknown.
    saga.unread_fields = {"protocol", "retry_count", "steps[0].data"};
    CHECK(h.coordinator().Submit(saga).ok());
    engine::RegisterBranchRequest branch{"t1", "01", "", "http://p/c", "http://p/x"};
    branch.unread_fields = {"status", "try", "subType", "op"};
    REQUIRE(h.coordinator().Prepare({"t1", {}}).ok());
    CHECK(h.coordinator().RegisterBranch(branch).ok());
  }
}

}  // namespace
}  // namespace settle::drive
