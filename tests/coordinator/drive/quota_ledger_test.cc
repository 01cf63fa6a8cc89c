// QuotaLedger (quota_ledger.h): what a caller may reserve, when the store must be read before a
// refusal, and how reservations and the store's numbers add up.
#include "settle/drive/quota_ledger.h"

#include <catch2/catch.hpp>

#include "fake_clock.h"

namespace settle::drive {
namespace {

using Outcome = QuotaLedger::Admission::Outcome;

TEST_CASE(
    "a caller is admitted up to its quota, and beyond it the store is read before a "
    "refusal",
    "[quota]") {
  testing::FakeClock clock;
  QuotaLedger ledger({.unfinished = 2, .bytes = 0}, clock);
  REQUIRE(ledger.Admit("a", 1, 100).outcome == Outcome::kAdmitted);
  ledger.Settle("a", 1, 100, true);
  REQUIRE(ledger.Admit("a", 1, 100).outcome == Outcome::kAdmitted);
  ledger.Settle("a", 1, 100, true);
  // Another caller counts apart.
  CHECK(ledger.Admit("b", 1, 100).outcome == Outcome::kAdmitted);

  // Over as counted: the store decides. It says A still holds both.
  const QuotaLedger::Admission over = ledger.Admit("a", 1, 100);
  CHECK(over.outcome == Outcome::kReadStore);
  CHECK(over.kind == QuotaKind::kUnfinished);
  ledger.Refresh("a", storage::CreatorUsage{"a", 2, 200});
  CHECK(ledger.Admit("a", 1, 100).outcome == Outcome::kRefused);
  // Refused from memory within the refresh interval, read again after it.
  clock.Advance(Duration(999));
  CHECK(ledger.Admit("a", 1, 100).outcome == Outcome::kRefused);
  clock.Advance(Duration(1));
  CHECK(ledger.Admit("a", 1, 100).outcome == Outcome::kReadStore);
  // One finished meanwhile.
  ledger.Refresh("a", storage::CreatorUsage{"a", 1, 100});
  CHECK(ledger.Admit("a", 1, 100).outcome == Outcome::kAdmitted);
  CHECK(ledger.UsageOf("a") == storage::CreatorUsage{"a", 2, 200});
}

TEST_CASE("reservations being stored count, and a refused write frees its reservation", "[quota]") {
  testing::FakeClock clock;
  QuotaLedger ledger({.unfinished = 0, .bytes = 1000}, clock);
  REQUIRE(ledger.Admit("a", 1, 600).outcome == Outcome::kAdmitted);
  // Not settled yet: a concurrent reservation sees it.
  const QuotaLedger::Admission second = ledger.Admit("a", 1, 600);
  CHECK(second.outcome == Outcome::kReadStore);
  CHECK(second.kind == QuotaKind::kBytes);
  ledger.Refresh("a", std::nullopt);  // the store holds nothing of A's yet
  CHECK(ledger.Admit("a", 1, 600).outcome == Outcome::kRefused);
  ledger.Settle("a", 1, 600, false);  // the first write was refused: nothing stored
  CHECK(ledger.Admit("a", 1, 600).outcome == Outcome::kAdmitted);
  CHECK(ledger.UsageOf("a") == storage::CreatorUsage{"a", 1, 600});
}

TEST_CASE("the counts start from the store's, and a quota of 0 is no limit", "[quota]") {
  testing::FakeClock clock;
  QuotaLedger ledger({.unfinished = 3, .bytes = 0}, clock);
  ledger.Reset({{"a", 3, 10}, {"b", 1, 10}});
  CHECK(ledger.Admit("a", 1, 1).outcome == Outcome::kReadStore);
  CHECK(ledger.Admit("b", 1, 1'000'000).outcome == Outcome::kAdmitted);
  CHECK_FALSE(QuotaLedger({.unfinished = 0, .bytes = 0}, clock).enabled());
  CHECK(QuotaRefusal(QuotaKind::kUnfinished, {.unfinished = 3, .bytes = 0}).message() ==
        "quota: this caller holds its --quota-unfinished of 3 unfinished transactions; finish "
        "some first");
  CHECK(QuotaRefusal(QuotaKind::kBytes, {.unfinished = 3, .bytes = 9}).code() ==
        StatusCode::kResourceExhausted);
}

TEST_CASE("a transaction's bytes are its branches' urls and bodies, its options and its span",
          "[quota]") {
  storage::BranchRecord confirm{.url = "http://a/confirm", .data = std::string(100, 'b')};
  storage::BranchRecord cancel = confirm;  // the same body, shared: stored once
  cancel.url = "http://a/cancel";
  storage::BranchRecord other{.url = "http://a/try", .data = std::string(100, 'b')};
  CHECK(QuotaLedger::BytesOf(nullptr, {confirm, cancel}) == 16 + 15 + 100);
  CHECK(QuotaLedger::BytesOf(nullptr, {confirm, other}) == 16 + 12 + 200);

  storage::GlobalRecord global;
  global.options.custom_data = R"({"k":1})";
  global.options.branch_headers = {{"X-Tenant", "t1"}};
  CHECK(QuotaLedger::BytesOf(&global, {confirm}) == 116 + 7 + 10);
  // Its span is stored with it: the ids and a tracestate of up to 512 bytes.
  global.trace = {.trace_id = std::string(32, 'a'),
                  .span_id = std::string(16, 'b'),
                  .parent_id = std::string(16, 'c'),
                  .state = std::string(512, 's')};
  CHECK(QuotaLedger::BytesOf(&global, {confirm}) == 116 + 7 + 10 + 32 + 16 + 16 + 512);
}

}  // namespace
}  // namespace settle::drive
