// TCC branches as workflow steps (Workflow::TccStep) against the SDK's bank and the settle of
// the test's process: the Try is the step, the Confirm its commit, the Cancel its rollback,
// each called with the TCC's ops so that the bank's TCC routes and barrier serve them. Judged
// by the money.
#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include "in_process_settled.h"
#include "sdk_bank.h"
#include "settle/sdk/client.h"
#include "settle/sdk/workflow.h"
#include "temp_dir.h"
#include "transfer_workflow.h"

namespace settle::sdk {
namespace {

using testing::InProcessSettled;
using testing::SdkBank;
using testing::Transfer;

constexpr std::int64_t kOpening = 100;

// settled, the bank and a service running the transfer workflow over HTTP, stopped in reverse.
struct World {
  testing::TempDir dir;
  SdkBank bank{dir.File("bank.db"), 3, kOpening};
  InProcessSettled settled;
  std::unique_ptr<Client> client;
  Transfer transfer;
  std::unique_ptr<Workflows> workflows;

  World() {
    auto made =
        Client::Create("http://127.0.0.1:" + std::to_string(settled.port()) + "/api/settle");
    REQUIRE(made);
    client = std::move(*made);
    transfer.bank = &bank;
    // No resume within a test: the service's own runs finish each workflow.
    workflows = std::make_unique<Workflows>(
        *client, WorkflowsOptions{.resume_url = "http://127.0.0.1:1/resume"});
    REQUIRE(testing::RegisterTransfer(*workflows, &transfer).ok());
  }
};

TEST_CASE("a workflow of TCC steps freezes, then confirms both sides once",
          "[sdk][workflow][tcc]") {
  World w;
  w.transfer.out_body = R"({"account_id":"1","amount":30})";
  w.transfer.second_body = R"({"account_id":"2","amount":30})";
  Result<std::string> done = w.workflows->Execute("transfer", "wf-tcc-1", "");
  REQUIRE(done);
  CHECK(*done == "moved");
  CHECK(w.bank.Balance("1") == kOpening - 30);
  CHECK(w.bank.Frozen("1") == 0);
  CHECK(w.bank.Balance("2") == kOpening + 30);
  // The barrier saw the TCC's ops under the workflow's gid: two Trys and two Confirms.
  CHECK(w.bank.BarrierRows() == 4);

  // Ended: its result again, and no money moves twice.
  Result<std::string> again = w.workflows->Execute("transfer", "wf-tcc-1", "");
  REQUIRE(again);
  CHECK(w.bank.Balance("1") == kOpening - 30);
  CHECK(w.bank.Balance("2") == kOpening + 30);
  CHECK(w.bank.BarrierRows() == 4);
}

TEST_CASE("a TCC step whose Try is refused cancels itself and the Trys before it",
          "[sdk][workflow][tcc]") {
  World w;
  w.transfer.out_body = R"({"account_id":"1","amount":30})";
  // The second step takes more than account 2 holds: its Try refuses.
  w.transfer.second_side = "TransOut";
  w.transfer.second_body = R"({"account_id":"2","amount":1000})";
  Result<std::string> failed = w.workflows->Execute("transfer", "wf-tcc-2", "");
  REQUIRE_FALSE(failed);
  CHECK(failed.status().code() == StatusCode::kConflict);
  CHECK_THAT(failed.status().message(), Catch::Contains("insufficient funds"));
  // The first Try's 30 came back out of frozen.
  CHECK(w.bank.Balance("1") == kOpening);
  CHECK(w.bank.Frozen("1") == 0);
  CHECK(w.bank.Total() == 3 * kOpening);
  // Try and Cancel of the first; the second's Cancel an empty rollback (its row and the Try's).
  CHECK(w.bank.BarrierRows() == 4);
  auto tx = w.client->Query("wf-tcc-2");
  REQUIRE(tx);
  REQUIRE(tx->has_value());
  CHECK((*tx)->status == GlobalStatus::kFailed);
}

TEST_CASE("a TCC step refused for insufficient funds leaves every account as it was",
          "[sdk][workflow][tcc]") {
  World w;
  w.transfer.out_body = R"({"account_id":"1","amount":1000})";
  w.transfer.second_body = R"({"account_id":"2","amount":1000})";
  Result<std::string> failed = w.workflows->Execute("transfer", "wf-tcc-3", "");
  REQUIRE_FALSE(failed);
  CHECK(failed.status().code() == StatusCode::kConflict);
  CHECK(w.bank.Total() == 3 * kOpening);
  CHECK(w.bank.Balance("2") == kOpening);
  // The payer's Cancel met a Try that did nothing: an empty rollback, recorded, so that a late
  // Try of that branch would hang instead of freezing.
  CHECK(w.bank.BarrierRows() == 2);
}

}  // namespace
}  // namespace settle::sdk
