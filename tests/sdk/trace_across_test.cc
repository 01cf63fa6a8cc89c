// One trace across services: an initiator's span, settled's span of the saga as its child, and
// each branch call a child span that two SDK participants receive. Real settled, real sockets.
#include <catch2/catch.hpp>

#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "eventually.h"
#include "file_text.h"
#include "json_client.h"
#include "sdk_test_support.h"
#include "settle/sdk/participant.h"
#include "settle/sdk/saga.h"
#include "settled_process.h"
#include "temp_dir.h"

namespace settle::sdk {
namespace {

using settle::testing::JsonClient;
using settle::testing::SettledProcess;
using settle::testing::TempDir;
using namespace settle::sdk::test;

constexpr const char* kTrace = "4bf92f3577b34da6a3ce929d0e0e4736";
constexpr const char* kInitiatorSpan = "00f067aa0ba902b7";

// An SDK participant that keeps the trace of every call its action got.
struct TracedParticipant {
  Participant participant;
  int port = 0;
  std::mutex mu;
  std::vector<TraceContext> seen;
  int failures_left = 0;  // the first calls answer 503

  explicit TracedParticipant(int fail_first = 0) : failures_left(fail_first) {
    const auto keep = [this](const BranchRequest& r) {
      std::lock_guard lock(mu);
      seen.push_back(r.trace);
      if (failures_left > 0) {
        --failures_left;
        return BranchReply::Error(Status::Unavailable("not yet"));
      }
      return BranchReply::Success();
    };
    participant.OnBranch("/action", keep).OnBranch("/compensate", keep);
    auto started = participant.Start("127.0.0.1", 0);
    REQUIRE(started);
    port = *started;
  }
  std::string Url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port) + path;
  }
  std::vector<TraceContext> Seen() {
    std::lock_guard lock(mu);
    return seen;
  }
};

TEST_CASE(
    "a saga's trace crosses settled and two SDK participants: settled's span a child of the "
    "initiator's, each call a child span of its own",
    "[sdk][trace][process]") {
  TempDir dir;
  SettledProcess settled(dir.File("settle.db"), {"--retry-interval", "50ms"});
  TracedParticipant bank;
  TracedParticipant shop(/*fail_first=*/1);  // its call is tried twice: two spans
  auto client = MakeClient("http://127.0.0.1:" + std::to_string(settled.port()) + "/api/settle");
  Saga saga(*client, "traced-saga");
  TransOptions options;
  options.wait_result = true;
  options.traceparent = std::string("00-") + kTrace + "-" + kInitiatorSpan + "-01";
  options.tracestate = "shop=checkout";
  saga.SetOptions(options)
      .Add(bank.Url("/action"), bank.Url("/compensate"), "{}")
      .Add(shop.Url("/action"), shop.Url("/compensate"), "{}");
  const Result<Outcome> outcome = saga.Submit();
  REQUIRE(outcome);

  JsonClient http(settled.port());
  nlohmann::json tx;
  REQUIRE(settle::testing::Eventually([&] {
    tx = http.Get("/api/settle/query?gid=traced-saga").json["transaction"];
    return tx["status"] == "succeed";
  }));
  // settled's span: of the initiator's trace, its parent the initiator's span.
  const std::string span = tx["trace"]["span_id"];
  CHECK(tx["trace"]["trace_id"] == kTrace);
  CHECK(tx["trace"]["parent_span_id"] == kInitiatorSpan);

  // Each participant's handler got the trace, a span of each call's own.
  const std::vector<TraceContext> at_bank = bank.Seen();
  const std::vector<TraceContext> at_shop = shop.Seen();
  REQUIRE(at_bank.size() == 1);
  REQUIRE(at_shop.size() == 2);
  std::set<std::string> spans = {span, kInitiatorSpan};
  for (const std::vector<TraceContext>* seen : {&at_bank, &at_shop}) {
    for (const TraceContext& call : *seen) {
      CHECK(call.trace_id == kTrace);
      CHECK(call.state == "shop=checkout");
      CHECK(call.flags == 1);
      CHECK(IsTraceHex(call.span_id, 16));
      CHECK(spans.insert(call.span_id).second);
    }
  }
  // settled's log tells the transaction's story under the same trace id.
  REQUIRE(settled.Terminate() == 0);
  CHECK_THAT(settle::testing::ReadFile(settled.log_path()),
             Catch::Contains(std::string("gid=traced-saga trans_type=saga submitted steps=2 "
                                         "trace_id=") +
                             kTrace));
}

}  // namespace
}  // namespace settle::sdk
