// settled's branch caller and an https:// participant, bodies of every size both ways: the
// call's body reaches the participant byte for byte, the participant's answer is read whole
// (a verdict at the end of a long answer counts), and the connection is kept alive across
// them. (Over HTTPS a body over 16 KiB once went out as its head alone, either way.)
#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <vector>

#include "byte_pattern.h"
#include "participant_server.h"
#include "sync_branch_caller.h"
#include "temp_dir.h"
#include "test_ca.h"

namespace settle::calls {
namespace {

using settle::testing::FirstDifference;
using settle::testing::ParticipantServer;
using settle::testing::PatternText;
using settle::testing::ReceivedCall;
using settle::testing::ScriptedAnswer;

constexpr std::size_t kNoDifference = std::string::npos;

engine::BranchCall ActionCall(const std::string& url, std::string data) {
  engine::BranchCall call;
  call.gid = "big-bodies";
  call.trans_type = TransType::kSaga;
  call.branch_id = "01";
  call.op = BranchOp::kAction;
  call.url = url;
  call.data = std::move(data);
  return call;
}

// The answer to a call to /action?answer=N&verdict=V: N bytes of pattern text, then V
// (SUCCESS, FAILURE or ONGOING) as the answer's last word.
ScriptedAnswer AnswerAsAsked(const ReceivedCall& call) {
  const std::size_t size = std::stoull(call.query.at("answer"));
  return {200, PatternText(size, size) + " " + call.query.at("verdict")};
}

TEST_CASE(
    "a branch body of any size reaches an HTTPS participant byte for byte and its answer of "
    "any size is read whole, every call on one kept-alive connection",
    "[coordinator][http_branch_caller][tls][bodies]") {
  testing::TempDir dir;
  testing::TestCa ca(dir.path());
  const testing::TestCa::Issued cert = ca.IssueForLocalhost();
  ParticipantServer participant(cert.cert_file, cert.key_file);
  participant.SetHandler("/action", AnswerAsAsked);
  testing::SyncBranchCaller caller(2, {.ca_file = ca.ca_file()});

  // Up to settled's largest body (a payload is at most --max-body-bytes, 1 MiB).
  const std::vector<std::size_t> sizes = {1,     100,   16383, 16384,   16385,
                                          21239, 65536, 65537, 300'000, 1 << 20};
  for (const std::size_t size : sizes) {
    INFO("body and answer of " << size << " bytes");
    const std::string body = PatternText(size, size + 1);
    const engine::BranchOutcome outcome = caller.Call(ActionCall(
        participant.Url("/action?answer=" + std::to_string(size) + "&verdict=SUCCESS"), body));
    CHECK(outcome.result == BranchResult::kSuccess);
    CHECK(outcome.http_status == 200);
    CHECK(outcome.detail.empty());
    const std::vector<ReceivedCall> received = participant.CallsTo("/action");
    REQUIRE(!received.empty());
    CHECK(received.back().method == "POST");
    CHECK(received.back().body.size() == size);
    CHECK(FirstDifference(received.back().body, body) == kNoDifference);
  }

  // A verdict at the end of an answer just under max_response_bytes (64 KiB) counts only when
  // the whole answer was read.
  const engine::BranchOutcome failed = caller.Call(
      ActionCall(participant.Url("/action?answer=65000&verdict=FAILURE"), PatternText(70000, 1)));
  CHECK(failed.result == BranchResult::kFailure);
  CHECK(failed.http_status == 200);
  const engine::BranchOutcome ongoing = caller.Call(
      ActionCall(participant.Url("/action?answer=65000&verdict=ONGOING"), PatternText(70000, 2)));
  CHECK(ongoing.result == BranchResult::kOngoing);

  std::set<int> connections;
  for (const ReceivedCall& call : participant.CallsTo("/action")) {
    connections.insert(call.remote_port);
  }
  CHECK(participant.CallsTo("/action").size() == sizes.size() + 2);
  CHECK(connections.size() == 1);
}

}  // namespace
}  // namespace settle::calls
