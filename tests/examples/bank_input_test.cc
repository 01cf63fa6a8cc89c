// Bad calls of the bank's branch URLs: each is refused naming what is wrong (a bad body 400, a
// bad query 409 FAILURE, docs/protocol.md §6.2), and changes nothing, not even the barrier (so
// a later good call for the same branch still runs).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "bank_fixture.h"
#include "temp_dir.h"

namespace settle::bank {
namespace {

struct Endpoint {
  std::string path;
  std::string trans_type;
  std::string op;
};

const std::vector<Endpoint> kEndpoints = {
    {"/api/TransOutTry", "tcc", "try"},        {"/api/TransOutConfirm", "tcc", "confirm"},
    {"/api/TransOutCancel", "tcc", "cancel"},  {"/api/TransInTry", "tcc", "try"},
    {"/api/TransInConfirm", "tcc", "confirm"}, {"/api/TransInCancel", "tcc", "cancel"},
    {"/api/TransOut", "saga", "action"},       {"/api/TransOutCompensate", "saga", "compensate"},
    {"/api/TransIn", "saga", "action"},        {"/api/TransInCompensate", "saga", "compensate"},
};

struct BadBody {
  std::string body;
  std::string field;  // the message must name it
};

const std::vector<BadBody> kBadBodies = {
    {R"({"account_id":"1","amount":30.5})", "amount"},
    {R"({"account_id":"1","amount":30.0})", "amount"},
    {R"({"account_id":"1","amount":"30"})", "amount"},
    {R"({"account_id":"1","amount":0})", "amount"},
    {R"({"account_id":"1","amount":-30})", "amount"},
    {R"({"account_id":"1","amount":true})", "amount"},
    {R"({"account_id":"1","amount":null})", "amount"},
    {R"({"account_id":"1"})", "amount"},
    {R"({"account_id":"1","amount":1000000000000001})", "amount"},
    {R"({"account_id":"1","amount":9223372036854775808})", "amount"},
    {R"({"account_id":"1","amount":18446744073709551615})", "amount"},
    {R"({"amount":30})", "account_id"},
    {R"({"account_id":1,"amount":30})", "account_id"},
    {R"({"account_id":"","amount":30})", "account_id"},
    {R"({"account_id":null,"amount":30})", "account_id"},
    {R"({"account_id":["1"],"amount":30})", "account_id"},
    {R"({"account_id":"1","amount":30)", "body"},
    {R"(["1",30])", "body"},
    {R"("hello")", "body"},
    {"", "body"},
};

TEST_CASE("a bad body is refused with 400 naming the field, and changes nothing", "[bank][input]") {
  settle::testing::TempDir dir;
  RunningBank bank(dir.File("bank.db"));
  for (const Endpoint& e : kEndpoints) {
    for (const BadBody& bad : kBadBodies) {
      const auto r = bank.Post(e.path + BranchQuery("g1", e.trans_type, "01", e.op), bad.body);
      INFO(e.path << " " << bad.body << " -> " << r.body);
      CHECK(r.status == 400);
      REQUIRE(r.json.is_object());
      CHECK(r.json["message"].get<std::string>().rfind(bad.field + ":", 0) == 0);
    }
  }
  CHECK(bank.Total() == 100000);
  CHECK(bank.Account("1") == AccountState{10000, 0});
  CHECK(bank.Rows("pending_credit") == 0);
  CHECK(bank.Rows("barrier") == 0);
  // Nothing counted as a Try or a Cancel: good calls for the same branches run normally.
  CHECK(bank.Tcc("/api/TransOutTry", "try", "1", 30).status == 200);
  CHECK(bank.Saga("/api/TransIn", "action", "2", 30).status == 200);
  CHECK(bank.Account("1") == AccountState{9970, 30});
  CHECK(bank.Account("2") == AccountState{10030, 0});
}

TEST_CASE("the largest amount is accepted", "[bank][input]") {
  settle::testing::TempDir dir;
  RunningBank bank(dir.File("bank.db"));
  CHECK(bank.Post("/api/TransIn" + BranchQuery("g1", "saga", "01", "action"),
                  R"({"account_id":"1","amount":1000000000000000, "note": "extra fields pass"})")
            .status == 200);
  CHECK(bank.Account("1") == AccountState{1'000'000'000'010'000, 0});
}

TEST_CASE("a body over 1 MiB is refused with 413", "[bank][input]") {
  settle::testing::TempDir dir;
  RunningBank bank(dir.File("bank.db"));
  const std::string body =
      R"({"account_id":"1","amount":30,"padding":")" + std::string(1 << 20, 'x') + R"("})";
  const auto r = bank.Post("/api/TransOutTry" + BranchQuery("g1", "tcc", "01", "try"), body);
  CHECK(r.status == 413);
  CHECK_THAT(r.json["message"].get<std::string>(), Catch::StartsWith("body: larger than"));
  CHECK(bank.Account("1") == AccountState{10000, 0});
  CHECK(bank.Rows("barrier") == 0);
}

TEST_CASE("a branch call without the protocol's query parameters is refused with 409 FAILURE",
          "[bank][input]") {
  settle::testing::TempDir dir;
  RunningBank bank(dir.File("bank.db"));
  const std::string body = TransferBody("1", 30);
  struct Case {
    std::string query;
    std::string missing;
  };
  const std::vector<Case> cases = {
      {"", "gid"},
      {"?trans_type=tcc&branch_id=01&op=try", "gid"},
      {"?gid=g1&branch_id=01&op=try", "trans_type"},
      {"?gid=g1&trans_type=tcc&op=try", "branch_id"},
      {"?gid=g1&trans_type=tcc&branch_id=01", "op"},
      {"?gid=g1&trans_type=tcc&branch_id=01&op=sideways", "op"},
      {"?gid=g1&trans_type=tcc&branch_id=01&op=confirm", "op"},  // not this URL's op
  };
  for (const Case& c : cases) {
    const auto r = bank.Post("/api/TransOutTry" + c.query, body);
    INFO(c.query << " -> " << r.body);
    CHECK(r.status == 409);
    CHECK(r.json["dtm_result"] == "FAILURE");
    CHECK(r.json["message"].get<std::string>().find(c.missing) != std::string::npos);
  }
  CHECK(bank.Account("1") == AccountState{10000, 0});
  CHECK(bank.Rows("barrier") == 0);
}

TEST_CASE("with signed calls the barrier must keep its rows longer than a signature is accepted",
          "[bank][input][signing]") {
  testing::TempDir dir;
  auto key = signing::VerifyingKey::FromText(
      "-----BEGIN PUBLIC KEY-----\n"
      "MCowBQYDK2VwAyEAJrQLj5P/89iXES9+vFgrIy29clF9CC/oPPsw3c5D0bs=\n"
      "-----END PUBLIC KEY-----\n");
  REQUIRE(key);
  BankOptions options;
  options.db_path = dir.File("bank.db");
  options.signed_calls = sdk::SignedCalls{.keys = {*key}};  // a 300 s window
  options.barrier_retention = Duration(600'000);
  auto refused = BankService::Open(options);
  REQUIRE_FALSE(refused);
  CHECK_THAT(refused.status().message(),
             Catch::StartsWith("barrier-retention: must be more than twice the signature window"));
  options.barrier_retention = Duration(601'000);
  CHECK(BankService::Open(options));
  // Without signed calls, or without cleaning, anything goes.
  options.barrier_retention = Duration(60'000);
  options.signed_calls.reset();
  CHECK(BankService::Open(options));
}

}  // namespace
}  // namespace settle::bank
