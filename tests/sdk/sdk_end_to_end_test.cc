// The SDK end to end: a client and bank participants built on it, through the real settled.
#include <catch2/catch.hpp>

#include <chrono>
#include <memory>

#include "eventually.h"
#include "sdk_bank.h"
#include "settle/sdk/client.h"
#include "settle/sdk/saga.h"
#include "settle/sdk/tcc.h"
#include "settled_process.h"
#include "temp_dir.h"

namespace settle {
namespace {

using sdk::Outcome;
using testing::SdkBank;

constexpr std::int64_t kInitial = 10000;

// Declared so that settled goes before the banks: a participant's Stop() waits for the
// keep-alive connections its clients still hold.
struct World {
  testing::TempDir dir;
  SdkBank bank_a{dir.File("bank-a.db"), 3, kInitial};
  SdkBank bank_b{dir.File("bank-b.db"), 3, kInitial};
  testing::SettledProcess settled{dir.File("settle.db"), {"--retry-interval", "100ms"}};
  std::unique_ptr<sdk::Client> client;

  World() {
    auto c =
        sdk::Client::Create("http://127.0.0.1:" + std::to_string(settled.port()) + "/api/settle");
    REQUIRE(c);
    client = std::move(*c);
  }

  std::string NewGid() {
    auto gid = client->NewGid();
    REQUIRE(gid);
    return *gid;
  }

  // Waits (bounded) until the coordinator has finished `gid`; returns its final status.
  GlobalStatus Finished(const std::string& gid) {
    GlobalStatus status = GlobalStatus::kPrepared;
    testing::Eventually(
        [&] {
          auto info = client->Query(gid);
          REQUIRE(info);
          REQUIRE(info->has_value());
          status = (*info)->status;
          return IsTerminal(status);
        },
        std::chrono::seconds(20), std::chrono::milliseconds(20));
    return status;
  }
};

std::string Body(const std::string& account, std::int64_t amount) {
  return R"({"account_id":")" + account + R"(","amount":)" + std::to_string(amount) + "}";
}

TEST_CASE("an SDK TCC transfer commits: money leaves one bank and arrives at the other",
          "[sdk][e2e][tcc]") {
  World w;
  sdk::TransOptions options;
  options.wait_result = true;
  auto outcome = sdk::RunTcc(*w.client, w.NewGid(), options, [&](sdk::Tcc& tcc) -> Status {
    auto out = tcc.CallBranch(Body("1", 30), w.bank_a.Url("/TransOutTry"),
                              w.bank_a.Url("/TransOutConfirm"), w.bank_a.Url("/TransOutCancel"));
    if (!out) return out.status();
    CHECK(w.bank_a.Frozen("1") == 30);  // reserved by the Try
    auto in = tcc.CallBranch(Body("2", 30), w.bank_b.Url("/TransInTry"),
                             w.bank_b.Url("/TransInConfirm"), w.bank_b.Url("/TransInCancel"));
    return in ? Status::Ok() : in.status();
  });
  REQUIRE(outcome);
  CHECK(outcome->status == GlobalStatus::kSucceed);
  CHECK(w.bank_a.Balance("1") == kInitial - 30);
  CHECK(w.bank_a.Frozen("1") == 0);
  CHECK(w.bank_b.Balance("2") == kInitial + 30);
  CHECK(w.bank_a.Total() + w.bank_b.Total() == 6 * kInitial);
}

TEST_CASE("an SDK TCC transfer with insufficient funds aborts and leaves nothing reserved",
          "[sdk][e2e][tcc]") {
  World w;
  const std::string gid = w.NewGid();
  auto outcome = sdk::RunTcc(*w.client, gid, {}, [&](sdk::Tcc& tcc) -> Status {
    auto in = tcc.CallBranch(Body("2", kInitial + 1), w.bank_b.Url("/TransInTry"),
                             w.bank_b.Url("/TransInConfirm"), w.bank_b.Url("/TransInCancel"));
    if (!in) return in.status();
    auto out = tcc.CallBranch(Body("1", kInitial + 1), w.bank_a.Url("/TransOutTry"),
                              w.bank_a.Url("/TransOutConfirm"), w.bank_a.Url("/TransOutCancel"));
    return out ? Status::Ok() : out.status();
  });
  REQUIRE(outcome);
  CHECK_FALSE(outcome->committed());
  CHECK_THAT(outcome->reason, Catch::Contains("insufficient funds"));
  // Both registered branches are cancelled; the failed Try's cancel is an empty rollback.
  CHECK(w.Finished(gid) == GlobalStatus::kFailed);
  CHECK(w.bank_a.Balance("1") == kInitial);
  CHECK(w.bank_a.Frozen("1") == 0);
  CHECK(w.bank_b.Balance("2") == kInitial);
  CHECK(w.bank_a.Total() + w.bank_b.Total() == 6 * kInitial);
}

TEST_CASE("an SDK saga transfer succeeds", "[sdk][e2e][saga]") {
  World w;
  sdk::Saga saga(*w.client, w.NewGid());
  saga.Add(w.bank_a.Url("/TransOut"), w.bank_a.Url("/TransOutCompensate"), Body("1", 50))
      .Add(w.bank_b.Url("/TransIn"), w.bank_b.Url("/TransInCompensate"), Body("3", 50));
  saga.options().wait_result = true;
  auto outcome = saga.Submit();
  REQUIRE(outcome);
  CHECK(outcome->status == GlobalStatus::kSucceed);
  CHECK(w.bank_a.Balance("1") == kInitial - 50);
  CHECK(w.bank_b.Balance("3") == kInitial + 50);
}

TEST_CASE("an SDK saga whose second step fails is compensated", "[sdk][e2e][saga]") {
  World w;
  sdk::Saga saga(*w.client, w.NewGid());
  saga.Add(w.bank_a.Url("/TransOut"), w.bank_a.Url("/TransOutCompensate"), Body("1", 70))
      .Add(w.bank_b.Url("/TransIn"), w.bank_b.Url("/TransInCompensate"), Body("no-such", 70));
  saga.options().wait_result = true;
  auto outcome = saga.Submit();
  REQUIRE(outcome);
  CHECK(outcome->status == GlobalStatus::kFailed);
  CHECK(w.bank_a.Balance("1") == kInitial);  // debited, then compensated
  CHECK(w.bank_a.Total() + w.bank_b.Total() == 6 * kInitial);
}

}  // namespace
}  // namespace settle
