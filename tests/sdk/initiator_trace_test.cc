// W3C Trace Context from the initiators' side (TransOptions::traceparent and tracestate): what
// the HTTP Client sends a coordinator, here a scripted server that records every request, and
// the branches the initiator calls itself.
#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "participant_server.h"
#include "sdk_test_support.h"
#include "settle/core/ascii.h"
#include "settle/sdk/msg.h"
#include "settle/sdk/saga.h"
#include "settle/sdk/tcc.h"
#include "settle/sdk/trans_options.h"
#include "settle/sdk/xa.h"

namespace settle::sdk {
namespace {

using nlohmann::json;
using settle::testing::ParticipantServer;
using settle::testing::ReceivedCall;
using namespace settle::sdk::test;

constexpr const char* kTraceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
constexpr const char* kTracestate = "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE";

TransOptions Traced(std::string traceparent = kTraceparent, std::string tracestate = kTracestate) {
  TransOptions options;
  options.traceparent = std::move(traceparent);
  options.tracestate = std::move(tracestate);
  return options;
}

// The values of the header `name` (any case) a request carried.
std::vector<std::string> Header(const ReceivedCall& call, std::string_view name) {
  std::vector<std::string> values;
  for (const auto& [field, value] : call.headers) {
    if (EqualsIgnoreAsciiCase(field, name)) values.push_back(value);
  }
  return values;
}

using Values = std::vector<std::string>;

// Every request `server` received carried the trace context (or, with `sent` false, none),
// and never in its body. The paths it received, in order.
std::vector<std::string> CheckEveryCall(const ParticipantServer& server, bool sent,
                                        const std::string& traceparent = kTraceparent,
                                        const std::string& tracestate = kTracestate) {
  std::vector<std::string> paths;
  for (const ReceivedCall& call : server.Calls()) {
    CAPTURE(call.path);
    paths.push_back(call.path);
    CHECK(Header(call, "traceparent") == (sent ? Values{traceparent} : Values{}));
    CHECK(Header(call, "tracestate") ==
          (sent && !tracestate.empty() ? Values{tracestate} : Values{}));
    CHECK(call.body.find("traceparent") == std::string::npos);
  }
  return paths;
}

// A transfer: TransOut at branch 01, TransIn at branch 02.
Status Transfer(Tcc& tcc, const ParticipantServer& p) {
  auto out = tcc.CallBranch(kOutBody, p.Url("/TransOutTry"), p.Url("/TransOutConfirm"),
                            p.Url("/TransOutCancel"));
  if (!out) return out.status();
  auto in = tcc.CallBranch(kInBody, p.Url("/TransInTry"), p.Url("/TransInConfirm"),
                           p.Url("/TransInCancel"));
  return in ? Status::Ok() : in.status();
}

TEST_CASE("TraceFields sends a valid traceparent as version 00 with the tracestate kept",
          "[sdk][trace]") {
  using Fields = std::vector<std::pair<std::string, std::string>>;
  CHECK(TraceFields(kTraceparent, kTracestate) ==
        Fields{{"traceparent", kTraceparent}, {"tracestate", kTracestate}});
  CHECK(TraceFields(kTraceparent, "") == Fields{{"traceparent", kTraceparent}});
  // A later version's, by its first four fields; its trailing ones are not passed on.
  CHECK(TraceFields("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x\r\ny: z", "") ==
        Fields{{"traceparent", kTraceparent}});
  // A tracestate W3C would drop goes, the traceparent stays.
  CHECK(TraceFields(kTraceparent, std::string(513, 'a')) == Fields{{"traceparent", kTraceparent}});
  CHECK(TraceFields(kTraceparent, "a=1\r\nX: y") == Fields{{"traceparent", kTraceparent}});
  CHECK(TraceFields("", kTracestate).empty());
  CHECK(TraceFields("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7", kTracestate).empty());
}

TEST_CASE("a TCC sends its traceparent and tracestate on prepare, registerBranch, Try and submit",
          "[sdk][trace]") {
  ParticipantServer p;
  ParticipantServer coordinator;
  auto client = MakeClient(coordinator.Url("/api/settle"));
  auto outcome = RunTcc(*client, "trace-tcc", Traced(), [&](Tcc& tcc) { return Transfer(tcc, p); });
  REQUIRE(outcome.ok());
  CHECK(CheckEveryCall(coordinator, true) ==
        std::vector<std::string>{"/api/settle/prepare", "/api/settle/registerBranch",
                                 "/api/settle/registerBranch", "/api/settle/submit"});
  // The Trys the initiator makes itself: the caller's span is their parent.
  CHECK(CheckEveryCall(p, true) == std::vector<std::string>{"/TransOutTry", "/TransInTry"});
  // Headers only: the bodies are what they are without them.
  CHECK(json::parse(coordinator.CallsTo("/api/settle/prepare")[0].body) ==
        json{{"gid", "trace-tcc"}, {"trans_type", "tcc"}});
}

TEST_CASE("a TCC that aborts sends its trace context on abort too", "[sdk][trace]") {
  ParticipantServer p;
  p.Script("/TransOutTry", {{409, R"({"dtm_result":"FAILURE"})"}});
  ParticipantServer coordinator;
  auto client = MakeClient(coordinator.Url("/api/settle"));
  auto outcome =
      RunTcc(*client, "trace-tcc-abort", Traced(), [&](Tcc& tcc) { return Transfer(tcc, p); });
  REQUIRE(outcome.ok());
  CHECK(outcome->status == GlobalStatus::kAborting);
  CHECK(CheckEveryCall(coordinator, true) == std::vector<std::string>{"/api/settle/prepare",
                                                                      "/api/settle/registerBranch",
                                                                      "/api/settle/abort"});
}

TEST_CASE("a saga, a message and an XA transaction send their trace context to the coordinator",
          "[sdk][trace]") {
  ParticipantServer p;
  ParticipantServer coordinator;
  auto client = MakeClient(coordinator.Url("/api/settle"));

  Saga saga(*client, "trace-saga");
  saga.Add(p.Url("/TransOut"), p.Url("/TransOutRevert"), kOutBody).SetOptions(Traced());
  REQUIRE(saga.Submit().ok());

  Msg msg(*client, "trace-msg");
  msg.Add(p.Url("/TransIn"), kInBody).SetOptions(Traced());
  REQUIRE(msg.Prepare(p.Url("/QueryPrepared")).ok());
  REQUIRE(msg.Submit().ok());
  REQUIRE(msg.Abort().ok());

  auto xa = RunXa(*client, "trace-xa", Traced(), [&](Xa& xa) {
    auto out = xa.CallBranch(kOutBody, p.Url("/TransOutXa"));
    return out ? Status::Ok() : out.status();
  });
  REQUIRE(xa.ok());

  CHECK(CheckEveryCall(coordinator, true) ==
        std::vector<std::string>{"/api/settle/submit", "/api/settle/prepare", "/api/settle/submit",
                                 "/api/settle/abort", "/api/settle/prepare", "/api/settle/submit"});
  // The XA action the initiator called itself; the saga's and message's steps are settled's.
  CHECK(CheckEveryCall(p, true) == std::vector<std::string>{"/TransOutXa"});
}

TEST_CASE("an invalid traceparent is not sent, nor its tracestate", "[sdk][trace]") {
  const std::string trace = "4bf92f3577b34da6a3ce929d0e0e4736", span = "00f067aa0ba902b7";
  for (const std::string& bad :
       {"00-" + trace + "-" + span,                             // short
        "ff-" + trace + "-" + span + "-01",                     // version ff
        "00-" + std::string(32, '0') + "-" + span + "-01",      // zero trace id
        "00-" + trace + "-" + std::string(16, '0') + "-01",     // zero span id
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-" + span + "-01",  // upper case
        "00-" + trace + "-" + span + "-01 ",                    // trailing space
        std::string("not a traceparent")}) {
    CAPTURE(bad);
    ParticipantServer p;
    ParticipantServer coordinator;
    auto client = MakeClient(coordinator.Url("/api/settle"));
    auto outcome =
        RunTcc(*client, "trace-bad", Traced(bad), [&](Tcc& tcc) { return Transfer(tcc, p); });
    REQUIRE(outcome.ok());
    CHECK(CheckEveryCall(coordinator, false).size() == 4);
    CHECK(CheckEveryCall(p, false).size() == 2);
  }
}

TEST_CASE("without a traceparent nothing is sent, and a tracestate W3C drops is left out",
          "[sdk][trace]") {
  ParticipantServer p;
  ParticipantServer coordinator;
  auto client = MakeClient(coordinator.Url("/api/settle"));
  SECTION("no traceparent: a tracestate alone means nothing") {
    REQUIRE(RunTcc(*client, "trace-none", Traced("", kTracestate), [&](Tcc& tcc) {
              return Transfer(tcc, p);
            }).ok());
    CHECK(CheckEveryCall(coordinator, false).size() == 4);
    CHECK(CheckEveryCall(p, false).size() == 2);
  }
  SECTION("a tracestate over 512 bytes: the traceparent alone") {
    REQUIRE(RunTcc(*client, "trace-long-state", Traced(kTraceparent, std::string(600, 'a')),
                   [&](Tcc& tcc) { return Transfer(tcc, p); })
                .ok());
    CHECK(CheckEveryCall(coordinator, true, kTraceparent, "").size() == 4);
    CHECK(CheckEveryCall(p, true, kTraceparent, "").size() == 2);
  }
}

TEST_CASE("the trace context takes the place of a client header or branch header of its name",
          "[sdk][trace]") {
  ParticipantServer p;
  ParticipantServer coordinator;
  auto client = MakeClient(coordinator.Url("/api/settle"),
                           ClientOptions{.headers = {{"Traceparent", "00-old"}, {"X-Token", "t"}}});
  TransOptions options = Traced();
  options.branch_headers = {{"TRACESTATE", "old=1"}, {"X-Tenant", "acme"}};
  REQUIRE(
      RunTcc(*client, "trace-replaced", options, [&](Tcc& tcc) { return Transfer(tcc, p); }).ok());
  CHECK(CheckEveryCall(coordinator, true).size() == 4);
  CHECK(CheckEveryCall(p, true).size() == 2);
  // The others are sent as before.
  CHECK(coordinator.Calls()[0].headers.at("X-Token") == "t");
  CHECK(p.Calls()[0].headers.at("X-Tenant") == "acme");
  // Without a trace context of the transaction's, the client's header goes as it is.
  ParticipantServer plain;
  auto plain_client =
      MakeClient(plain.Url("/api/settle"), ClientOptions{.headers = {{"Traceparent", "00-old"}}});
  REQUIRE(RunTcc(*plain_client, "trace-kept", {}, [](Tcc&) { return Status::Ok(); }).ok());
  CHECK(Header(plain.Calls()[0], "traceparent") == Values{"00-old"});
}

}  // namespace
}  // namespace settle::sdk
