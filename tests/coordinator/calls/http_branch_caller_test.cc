#include "settle/calls/http_branch_caller.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>

#include "participant_server.h"
#include "settle/signing/keys.h"
#include "sync_branch_caller.h"

namespace settle::calls {
namespace {

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using settle::testing::ParticipantServer;
using settle::testing::ReceivedCall;
using settle::testing::ScriptedAnswer;

engine::BranchCall CallTo(const std::string& url, std::string data = "") {
  engine::BranchCall call;
  call.gid = "gid-1";
  call.trans_type = TransType::kTcc;
  call.branch_id = "01";
  call.op = BranchOp::kConfirm;
  call.url = url;
  call.data = std::move(data);
  return call;
}

// A port on 127.0.0.1 that nothing listens on: the kernel picks a free one, and closing the
// socket frees it again.
int UnusedPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  socklen_t len = sizeof(addr);
  REQUIRE(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  close(fd);
  return ntohs(addr.sin_port);
}

TEST_CASE("a branch with data is POSTed byte for byte with the protocol's parameters and headers",
          "[coordinator][http_branch_caller]") {
  ParticipantServer participant;
  testing::SyncBranchCaller caller;
  engine::BranchCall call = CallTo(participant.Url("/compensate"), R"({"amount": 30})");
  call.trans_type = TransType::kSaga;
  call.branch_id = "02";
  call.op = BranchOp::kCompensate;
  call.headers = {{"X-Tenant", "acme"}, {"Authorization", "Bearer t0k"}};

  const engine::BranchOutcome outcome = caller.Call(call);

  CHECK(outcome.result == BranchResult::kSuccess);
  CHECK(outcome.http_status == 200);
  CHECK(outcome.detail.empty());
  const std::vector<ReceivedCall> received = participant.CallsTo("/compensate");
  REQUIRE(received.size() == 1);
  CHECK(received[0].method == "POST");
  CHECK(received[0].body == R"({"amount": 30})");
  CHECK(received[0].query ==
        std::map<std::string, std::string>{
            {"gid", "gid-1"}, {"trans_type", "saga"}, {"branch_id", "02"}, {"op", "compensate"}});
  CHECK(received[0].headers.at("Content-Type") == "application/json");
  CHECK(received[0].headers.at("X-Tenant") == "acme");
  CHECK(received[0].headers.at("Authorization") == "Bearer t0k");
}

TEST_CASE("a branch without data is called with GET", "[coordinator][http_branch_caller]") {
  ParticipantServer participant;
  testing::SyncBranchCaller caller;

  const engine::BranchOutcome outcome = caller.Call(CallTo(participant.Url("/confirm")));

  CHECK(outcome.result == BranchResult::kSuccess);
  const std::vector<ReceivedCall> received = participant.CallsTo("/confirm");
  REQUIRE(received.size() == 1);
  CHECK(received[0].method == "GET");
  CHECK(received[0].body.empty());
  CHECK(received[0].query.at("trans_type") == "tcc");
  CHECK(received[0].query.at("op") == "confirm");
  CHECK(received[0].headers.at("Content-Type") == "application/json");
}

TEST_CASE("a registered URL's own query is kept as registered and the parameters follow with &",
          "[coordinator][http_branch_caller]") {
  ParticipantServer participant;
  testing::SyncBranchCaller caller;

  // '+' means a space in a query; re-encoding it as %2B would change what the participant reads.
  const engine::BranchOutcome outcome =
      caller.Call(CallTo(participant.Url("/confirm?tenant=a+b&region=eu"), "{}"));

  CHECK(outcome.result == BranchResult::kSuccess);
  const std::vector<ReceivedCall> received = participant.CallsTo("/confirm");
  REQUIRE(received.size() == 1);
  CHECK(received[0].query == std::map<std::string, std::string>{{"tenant", "a b"},
                                                                {"region", "eu"},
                                                                {"gid", "gid-1"},
                                                                {"trans_type", "tcc"},
                                                                {"branch_id", "01"},
                                                                {"op", "confirm"}});
}

TEST_CASE("answers are classified in the protocol's order", "[coordinator][http_branch_caller]") {
  struct Case {
    ScriptedAnswer answer;
    BranchResult result;
    std::string detail;
  };
  const std::vector<Case> cases = {
      {{200, R"({"dtm_result":"SUCCESS"})"}, BranchResult::kSuccess, ""},
      {{200, ""}, BranchResult::kSuccess, ""},
      {{409, "no funds"}, BranchResult::kFailure, "HTTP 409: no funds"},
      {{425, ""}, BranchResult::kOngoing, "HTTP 425"},
      {{500, "boom\ntrace"}, BranchResult::kUnknown, "HTTP 500: boom trace"},
      {{404, "not here"}, BranchResult::kUnknown, "HTTP 404: not here"},
      {{200, R"({"dtm_result":"FAILURE"})"},
       BranchResult::kFailure,
       R"(HTTP 200: {"dtm_result":"FAILURE"})"},
      {{200, R"({"dtm_result":"ONGOING"})"},
       BranchResult::kOngoing,
       R"(HTTP 200: {"dtm_result":"ONGOING"})"},
      // ONGOING is checked before FAILURE.
      {{409, R"({"dtm_result":"ONGOING"})"},
       BranchResult::kOngoing,
       R"(HTTP 409: {"dtm_result":"ONGOING"})"},
  };
  ParticipantServer participant;
  std::vector<ScriptedAnswer> script;
  for (const Case& c : cases) script.push_back(c.answer);
  participant.Script("/confirm", script);
  testing::SyncBranchCaller caller;

  for (const Case& c : cases) {
    INFO("HTTP " << c.answer.status << " with body '" << c.answer.body << "'");
    const engine::BranchOutcome outcome = caller.Call(CallTo(participant.Url("/confirm")));
    CHECK(outcome.result == c.result);
    CHECK(outcome.http_status == c.answer.status);
    CHECK(outcome.detail == c.detail);
  }
}

// docs/protocol.md §4.9: a participant refuses settled's signature with 401
// {"message":"signature: <reason>"}; any other 401 keeps its own words.
TEST_CASE("a 401 is blamed on settled's signature only when the participant says so",
          "[coordinator][http_branch_caller][signing]") {
  auto key =
      signing::SigningKey::FromText("hmac:c2lnbmluZyBrZXkgb2YgdGhlIGJyYW5jaCBjYWxsZXIgdGVzdHM=");
  REQUIRE(key);
  ParticipantServer participant;
  participant.Script("/confirm", {{401, R"({"message":"signature: unknown keyid \"x\""})"},
                                  {401, R"({"message":"token expired"})"},
                                  {401, "signature: not JSON"}});
  testing::SyncBranchCaller caller(2, {}, {.signing_key = *key});
  const std::string refused =
      "the participant refuses settled's signature (key " + key->keyid() + "): HTTP 401: ";
  const engine::BranchOutcome signature = caller.Call(CallTo(participant.Url("/confirm")));
  CHECK(signature.result == BranchResult::kUnknown);
  CHECK_THAT(signature.detail, StartsWith(refused));
  for (int i = 0; i < 2; ++i) {
    const engine::BranchOutcome other = caller.Call(CallTo(participant.Url("/confirm")));
    CHECK(other.result == BranchResult::kUnknown);
    CHECK_THAT(other.detail, StartsWith("HTTP 401: "));
  }
}

TEST_CASE("a refused connection is an unknown outcome that says so",
          "[coordinator][http_branch_caller]") {
  testing::SyncBranchCaller caller;

  const engine::BranchOutcome outcome =
      caller.Call(CallTo("http://127.0.0.1:" + std::to_string(UnusedPort()) + "/confirm"));

  CHECK(outcome.result == BranchResult::kUnknown);
  CHECK(outcome.http_status == 0);
  CHECK_THAT(outcome.detail, Contains("connection refused"));
}

TEST_CASE("an invalid stored URL is an unknown outcome, not a crash",
          "[coordinator][http_branch_caller]") {
  testing::SyncBranchCaller caller;

  for (const std::string url : {"", "ftp://127.0.0.1/confirm", "http://", "http://h:99999/x"}) {
    INFO("url '" << url << "'");
    const engine::BranchOutcome outcome = caller.Call(CallTo(url));
    CHECK(outcome.result == BranchResult::kUnknown);
    CHECK(outcome.http_status == 0);
    CHECK_THAT(outcome.detail, StartsWith("invalid branch URL"));
  }
}

TEST_CASE("a branch header that would break the request is an unknown outcome",
          "[coordinator][http_branch_caller]") {
  ParticipantServer participant;
  testing::SyncBranchCaller caller;
  engine::BranchCall call = CallTo(participant.Url("/confirm"));
  call.headers = {{"X-Evil", "a\r\nX-Injected: 1"}};

  const engine::BranchOutcome outcome = caller.Call(call);

  CHECK(outcome.result == BranchResult::kUnknown);
  CHECK_THAT(outcome.detail, Contains("invalid branch header 'X-Evil'"));
  CHECK(participant.CountCalls("/confirm") == 0);
}

TEST_CASE("branch headers that would frame the message are not sent at all",
          "[coordinator][http_branch_caller]") {
  ParticipantServer participant;
  testing::SyncBranchCaller caller;
  engine::BranchCall call = CallTo(participant.Url("/confirm"), R"({"amount": 30})");
  call.headers = {{"Content-Length", "3"}, {"Connection", "close"}};

  const engine::BranchOutcome outcome = caller.Call(call);

  // Refused at prepare and submit; a row stored before that is an error, retried.
  CHECK(outcome.result == BranchResult::kUnknown);
  CHECK_THAT(outcome.detail, StartsWith("not sent: branch header Connection"));
  CHECK(participant.CountCalls("/confirm") == 0);
}

TEST_CASE("a participant slower than the call's timeout is an unknown outcome: timed out",
          "[coordinator][http_branch_caller]") {
  ParticipantServer participant;
  participant.SetDefault(
      "/confirm", ScriptedAnswer{200, R"({"dtm_result":"SUCCESS"})", std::chrono::seconds(30)});
  testing::SyncBranchCaller caller;
  engine::BranchCall call = CallTo(participant.Url("/confirm"));
  call.timeout = Duration(200);

  const engine::BranchOutcome outcome = caller.Call(call);

  CHECK(outcome.result == BranchResult::kUnknown);
  CHECK(outcome.http_status == 0);
  CHECK_THAT(outcome.detail, StartsWith("timed out after 200 ms"));
}

TEST_CASE("only the start of a huge answer is kept and classified",
          "[coordinator][http_branch_caller]") {
  const std::string megabytes(6 * 1024 * 1024, 'x');
  ParticipantServer participant;
  participant.Script("/confirm", {{200, megabytes + "FAILURE"}, {500, "FAILURE" + megabytes}});
  testing::SyncBranchCaller caller(2, {}, {.max_response_bytes = 4096});

  // FAILURE past the limit is never seen.
  const engine::BranchOutcome beyond_limit = caller.Call(CallTo(participant.Url("/confirm")));
  CHECK(beyond_limit.result == BranchResult::kSuccess);
  CHECK(beyond_limit.http_status == 200);

  const engine::BranchOutcome within_limit = caller.Call(CallTo(participant.Url("/confirm")));
  CHECK(within_limit.result == BranchResult::kFailure);
  CHECK(within_limit.http_status == 500);
  CHECK_THAT(within_limit.detail, StartsWith("HTTP 500: FAILURExxx"));
  CHECK(within_limit.detail.size() <= 300);

  // The rest of each body was read and discarded, so the connection stayed usable.
  const engine::BranchOutcome after = caller.Call(CallTo(participant.Url("/confirm")));
  CHECK(after.result == BranchResult::kSuccess);
  const std::vector<ReceivedCall> received = participant.CallsTo("/confirm");
  REQUIRE(received.size() == 3);
  CHECK(received[2].remote_port == received[0].remote_port);
}

}  // namespace
}  // namespace settle::calls
