// settle-check --entry, run as a user runs it: against an entry point behind IdempotencyGuard
// (every check passes), against the same entry point without a guard (the checks that catch it
// fail), against a recording server (what goes on the wire), and with bad arguments.
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "child_process.h"
#include "order_entry_point.h"
#include "participant_server.h"
#include "settle_check_run.h"
#include "settled_process.h"
#include "temp_dir.h"

namespace {

using settle::testing::CheckRun;
using settle::testing::OrderEntryPoint;
using settle::testing::OrderEntryPointOptions;
using settle::testing::ParticipantServer;
using settle::testing::ReceivedCall;
using settle::testing::RunSettleCheck;
using settle::testing::ScriptedAnswer;

const std::string kOrder = R"({"item":"book","quantity":1})";
const std::vector<std::string> kEntryChecks = {"missing key", "invalid key", "repeat", "other body",
                                               "concurrent duplicates"};

std::vector<std::string> EntryArgs(const OrderEntryPoint& service, bool with_state = true) {
  std::vector<std::string> args = {"--entry", service.Url("/orders"), "--body", kOrder};
  if (with_state) args.insert(args.end(), {"--state", service.Url("/orders/count")});
  return args;
}

}  // namespace

TEST_CASE("settle-check --entry passes every check of an entry point behind IdempotencyGuard",
          "[fault][settle-check]") {
  OrderEntryPoint service;
  const CheckRun run = RunSettleCheck(EntryArgs(service));
  INFO(run.out << run.err);
  CHECK(run.exit_code == 0);
  for (const std::string& check : kEntryChecks) CHECK(run.Verdict(check) == "PASS");
  CHECK(run.Line("missing key") ==
        "PASS  missing key: a POST without Idempotency-Key answered HTTP 400 and changed nothing");
  CHECK(run.Line("repeat") ==
        "PASS  repeat: a second POST with the same key and body got the first's answer and "
        "changed nothing");
  CHECK(run.Line("concurrent duplicates")
            .find("; a repeat after them got the same answer, and together they changed the "
                  "state as one request does ({\"orders\":1})") != std::string::npos);
  CHECK(run.out.find("entry point: 5 checks, 5 passed, 0 failed, 0 unverified (keys "
                     "settle-check-") != std::string::npos);
}

TEST_CASE("settle-check --entry without --state checks only the answers", "[fault][settle-check]") {
  OrderEntryPoint service;
  const CheckRun run = RunSettleCheck(EntryArgs(service, false));
  INFO(run.out << run.err);
  CHECK(run.exit_code == 0);
  for (const std::string& check : kEntryChecks) CHECK(run.Verdict(check) == "UNVERIFIED");
  CHECK(run.Line("other body") ==
        "UNVERIFIED  other body: the same key with another body answered HTTP 422; whether it "
        "changed nothing needs --state");
  CHECK(run.out.find("without --state URL, settle-check cannot see whether a request was "
                     "applied once or not at all") != std::string::npos);
}

TEST_CASE("settle-check --entry fails every check of an entry point without a guard",
          "[fault][settle-check]") {
  OrderEntryPoint service({.guarded = false});
  const CheckRun run = RunSettleCheck(EntryArgs(service));
  INFO(run.out << run.err);
  CHECK(run.exit_code == 1);
  for (const std::string& check : kEntryChecks) CHECK(run.Verdict(check) == "FAIL");
  CHECK(run.Line("missing key")
            .find("a POST without Idempotency-Key answered HTTP 201: {\"order_id\":1}, expected "
                  "400: it ran without a key") != std::string::npos);
  CHECK(run.Line("missing key").find("(key") == std::string::npos);  // it sent none
  CHECK(run.Line("repeat").find("the second POST with the same key and body answered HTTP 201: "
                                "{\"order_id\":4}, expected the first's answer HTTP 201: "
                                "{\"order_id\":3} byte for byte") != std::string::npos);
  CHECK(run.Line("concurrent duplicates")
            .find("two of the simultaneous POSTs with one key answered differently") !=
        std::string::npos);
  CHECK(run.out.find("entry point: 5 checks, 0 passed, 5 failed, 0 unverified") !=
        std::string::npos);
}

TEST_CASE("settle-check --entry sees in --state the duplicates that identical answers hide",
          "[fault][settle-check]") {
  OrderEntryPoint service({.guarded = false, .numbered_answers = false});
  std::vector<std::string> args = EntryArgs(service);
  args.insert(args.end(), {"--concurrency", "4"});
  const CheckRun run = RunSettleCheck(args);
  INFO(run.out << run.err);
  CHECK(run.exit_code == 1);
  CHECK(run.Line("repeat").find("got the first's answer but changed the state: before "
                                "{\"orders\":3}, after {\"orders\":4}") != std::string::npos);
  // Four at once and the repeat after them: five orders where one request makes one.
  CHECK(run.Line("concurrent duplicates")
            .find("of 4 simultaneous POSTs with one key, 4 answered HTTP 201 and 0 answered 409 "
                  "with Retry-After; a repeat after them got the same answer but they changed "
                  "the state by {\"orders\":5}, and one request changes it by {\"orders\":1}") !=
        std::string::npos);

  const CheckRun blind = RunSettleCheck(EntryArgs(service, false));
  INFO(blind.out << blind.err);
  CHECK(blind.Verdict("repeat") == "UNVERIFIED");
  CHECK(blind.Verdict("concurrent duplicates") == "UNVERIFIED");
}

TEST_CASE("settle-check --entry --key-optional accepts a request without a key",
          "[fault][settle-check]") {
  OrderEntryPoint service({.key_required = false});
  const CheckRun strict = RunSettleCheck(EntryArgs(service));
  INFO(strict.out << strict.err);
  CHECK(strict.exit_code == 1);
  CHECK(strict.Verdict("missing key") == "FAIL");
  CHECK(strict.Line("missing key").find("run with --key-optional") != std::string::npos);

  std::vector<std::string> args = EntryArgs(service);
  args.push_back("--key-optional");
  const CheckRun optional = RunSettleCheck(args);
  INFO(optional.out << optional.err);
  CHECK(optional.exit_code == 0);
  for (const std::string& check : kEntryChecks) CHECK(optional.Verdict(check) == "PASS");
  CHECK(optional.Line("missing key") ==
        "PASS  missing key: a POST without Idempotency-Key answered HTTP 201 (--key-optional)");
}

TEST_CASE("settle-check --entry sends its keys as specified and its duplicates at once",
          "[fault][settle-check]") {
  ParticipantServer server;
  // The concurrent check's duplicates are answered only once all of them are here: were they
  // sent one after another, the first would wait out settle-check's timeout.
  constexpr std::size_t kAtOnce = 5;
  std::mutex mu;
  std::condition_variable arrived;
  std::size_t duplicates = 0;
  server.SetHandler("/orders", [&](const ReceivedCall& call) {
    const auto key = call.headers.find("Idempotency-Key");
    if (key != call.headers.end() && key->second.size() > 2 &&
        key->second.compare(key->second.size() - 2, 2, "-5") == 0) {
      std::unique_lock<std::mutex> lock(mu);
      ++duplicates;
      arrived.notify_all();
      arrived.wait_for(lock, std::chrono::seconds(10), [&] { return duplicates >= kAtOnce; });
    }
    return ScriptedAnswer{201, R"({"order_id":1})"};
  });
  const CheckRun run = RunSettleCheck(
      {"--entry", server.Url("/orders"), "--body", kOrder, "--other-body", R"({"item":"lamp"})",
       "--concurrency", std::to_string(kAtOnce), "--header", "Authorization: Bearer secret"});
  INFO(run.out << run.err);
  CHECK(run.exit_code == 1);  // it answers 201 without a key
  CHECK(run.Verdict("concurrent duplicates") == "UNVERIFIED");

  std::set<std::string> keys;
  std::size_t without_key = 0;
  std::size_t other_bodies = 0;
  for (const ReceivedCall& call : server.CallsTo("/orders")) {
    CHECK(call.method == "POST");
    CHECK(call.query.empty());
    CHECK(call.headers.count("Authorization") == 1);
    const auto content_type = call.headers.find("Content-Type");
    CHECK((content_type != call.headers.end() && content_type->second == "application/json"));
    if (call.body != kOrder) {
      CHECK(call.body == R"({"item":"lamp"})");
      ++other_bodies;
    }
    const auto key = call.headers.find("Idempotency-Key");
    if (key == call.headers.end()) {
      ++without_key;
    } else {
      CHECK(key->second.rfind("settle-check-", 0) == 0);
      keys.insert(key->second);
    }
  }
  CHECK(without_key == 1);
  CHECK(other_bodies == 1);
  // The invalid key, the repeat's, the other body's and the concurrent check's.
  REQUIRE(keys.size() == 4);
  const std::string prefix = keys.begin()->substr(0, keys.begin()->rfind('-'));
  CHECK(keys ==
        std::set<std::string>{prefix + "-2 invalid", prefix + "-3", prefix + "-4", prefix + "-5"});
  CHECK(duplicates == kAtOnce + 1);  // and the repeat after them
}

TEST_CASE("settle-check --entry exits 2 when the entry point cannot be reached",
          "[fault][settle-check]") {
  std::string url;
  {
    ParticipantServer gone;  // its port is free again once it is destroyed
    url = gone.Url("/orders");
  }
  const CheckRun run = RunSettleCheck({"--entry", url, "--body", kOrder});
  INFO(run.out << run.err);
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("cannot reach the entry point at " + url) != std::string::npos);
}

TEST_CASE("settle-check --entry exits 2 with a message on bad arguments", "[fault][settle-check]") {
  const std::string url = "http://127.0.0.1:9/orders";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--entry", url, "--body", kOrder, "--tcc", "TransOut"}, "not a branch"},
      {{"--entry", url, "--body", kOrder, "--participant", "http://127.0.0.1:9/api"},
       "not a branch"},
      {{"--entry", url, "--body", kOrder, "--action", url}, "not a branch"},
      {{"--entry", url}, "--entry needs --body"},
      {{"--entry", "ftp://x", "--body", kOrder}, "--entry ftp://x"},
      {{"--entry", url, "--body", "{oops"}, "--body: not valid JSON"},
      {{"--entry", url, "--body", kOrder, "--other-body", "{oops"}, "--other-body: not valid"},
      {{"--entry", url, "--body", kOrder, "--other-body", kOrder}, "must differ from --body"},
      {{"--entry", url, "--body", kOrder, "--concurrency", "1"}, "--concurrency"},
      {{"--entry", url, "--body", kOrder, "--header", "Idempotency-Key: k"},
       "settle-check sets Idempotency-Key itself"},
      {{"--participant", url, "--tcc", "A", "--key-optional"}, "go with --entry"},
      {{"--participant", url, "--tcc", "A", "--other-body", kOrder}, "go with --entry"},
  };
  for (const auto& [args, message] : cases) {
    const CheckRun run = RunSettleCheck(args);
    INFO(run.out << run.err);
    CHECK(run.exit_code == 2);
    CHECK(run.err.find(message) != std::string::npos);
    CHECK(run.out.empty());
  }
}

TEST_CASE("settle-check --entry passes every check of the order-service example",
          "[fault][settle-check]") {
  settle::testing::TempDir dir;
  settle::testing::SettledProcess settled(dir.File("settle.db"));
  settle::testing::ChildProcess service(
      {ORDER_SERVICE_BINARY, "--port", "0", "--db", dir.File("orders.db"), "--coordinator",
       "http://127.0.0.1:" + std::to_string(settled.port()) + "/api/settle"},
      dir.File("order-service.log"));
  const std::string line = service.WaitForLine("listening on http://", std::chrono::seconds(20));
  REQUIRE_FALSE(line.empty());
  const std::string base = line.substr(line.find("http://"));

  const CheckRun run = RunSettleCheck(
      {"--entry", base + "/orders", "--body", kOrder, "--state", base + "/orders/count"});
  INFO(run.out << run.err);
  CHECK(run.exit_code == 0);
  for (const std::string& check : kEntryChecks) CHECK(run.Verdict(check) == "PASS");
}
