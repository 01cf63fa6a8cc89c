// W3C Trace Context from a participant's side: the traceparent and tracestate a branch call
// carries, as BranchRequest::trace and XaRequest::trace give them to a handler (over real HTTP
// on 127.0.0.1), and as ReadCallTrace reads them.
#include <catch2/catch.hpp>

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "json_client.h"
#include "participant_server.h"
#include "raw_connection.h"
#include "sdk_test_support.h"
#include "settle/sdk/call_trace.h"
#include "settle/sdk/participant.h"
#include "settle/sdk/tcc.h"

namespace settle::sdk {
namespace {

using settle::testing::JsonClient;
using settle::testing::ParticipantServer;
using settle::testing::RawConnection;

constexpr const char* kTraceId = "4bf92f3577b34da6a3ce929d0e0e4736";
constexpr const char* kSpanId = "00f067aa0ba902b7";
constexpr const char* kTraceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
constexpr const char* kTracestate = "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE";
const std::string kQuery = "?gid=g1&trans_type=tcc&branch_id=01&op=confirm";

// The trace a call with kTraceparent and `state` carries.
void CheckCallersSpan(const TraceContext& trace, const std::string& state = kTracestate) {
  CHECK(trace.trace_id == kTraceId);
  CHECK(trace.span_id == kSpanId);
  CHECK(trace.parent_id.empty());
  CHECK(trace.flags == 1);
  CHECK(trace.state == state);
}

TEST_CASE("ReadCallTrace reads the one traceparent and every tracestate of a call",
          "[sdk][trace]") {
  using Fields = std::multimap<std::string, std::string>;
  CheckCallersSpan(ReadCallTrace({{"traceparent", kTraceparent}, {"tracestate", kTracestate}}));
  // HTTP's names in any case.
  CheckCallersSpan(ReadCallTrace({{"TraceParent", kTraceparent}, {"TRACESTATE", kTracestate}}));
  CheckCallersSpan(ReadCallTrace({{"traceparent", kTraceparent}}), "");
  // Several tracestate fields are one list, in order; empty ones add nothing.
  CheckCallersSpan(ReadCallTrace(Fields{{"traceparent", kTraceparent},
                                        {"tracestate", "rojo=00f067aa0ba902b7"},
                                        {"tracestate", ""},
                                        {"tracestate", "congo=t61rcWkgMzE"}}));
  // None, two, or one W3C says to ignore: no trace, and no tracestate either.
  CHECK(ReadCallTrace({}).empty());
  CHECK(ReadCallTrace({{"tracestate", kTracestate}}) == TraceContext{});
  CHECK(
      ReadCallTrace(Fields{{"traceparent", kTraceparent}, {"Traceparent", kTraceparent}}).empty());
  for (const std::string bad : {"", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
                                "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                                "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
                                "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01"}) {
    CAPTURE(bad);
    CHECK(ReadCallTrace({{"traceparent", bad}, {"tracestate", kTracestate}}) == TraceContext{});
  }
}

// A participant whose handlers keep the last request they got.
struct Fixture {
  Participant participant;
  int port = 0;
  std::mutex mu;
  BranchRequest last;
  XaRequest last_xa;

  Fixture() {
    participant
        .OnBranch("/api/TransOut",
                  [this](const BranchRequest& r) {
                    std::lock_guard lock(mu);
                    last = r;
                    return BranchReply::Success();
                  })
        .OnXa("/api/Xa", [this](const XaRequest& r) {
          std::lock_guard lock(mu);
          last_xa = r;
          return BranchReply::Success();
        });
    auto started = participant.Start("127.0.0.1", 0);
    REQUIRE(started);
    port = *started;
  }
  // A call of the branch URL with these headers: its trace as the handler saw it.
  TraceContext Call(const std::map<std::string, std::string>& headers) {
    JsonClient client(port);
    for (const auto& [name, value] : headers) client.SetHeader(name, value);
    REQUIRE(client.Post("/api/TransOut" + kQuery, "{}").status == 200);
    std::lock_guard lock(mu);
    return last.trace;
  }
};

TEST_CASE("a branch handler gets the call's traceparent and tracestate in BranchRequest::trace",
          "[sdk][trace]") {
  Fixture f;
  CheckCallersSpan(f.Call({{"traceparent", kTraceparent}, {"tracestate", kTracestate}}));
  // The headers are there as ever.
  CHECK(f.last.headers.find("traceparent")->second == kTraceparent);
  CHECK(f.Call({}).empty());
  // An invalid one is no trace: the participant's own tracing starts a trace of its own.
  CHECK(f.Call({{"traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-zz"},
                {"tracestate", kTracestate}}) == TraceContext{});
  CHECK(f.Call({{"tracestate", kTracestate}}) == TraceContext{});

  // Two traceparent fields on one call name no one span.
  RawConnection raw(f.port);
  REQUIRE(raw.Send("POST /api/TransOut" + kQuery +
                   " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                   "traceparent: " +
                   kTraceparent + "\r\ntraceparent: " + kTraceparent +
                   "\r\nContent-Length: 0\r\n\r\n"));
  CHECK(raw.Read().status == 200);
  std::lock_guard lock(f.mu);
  CHECK(f.last.trace.empty());
}

TEST_CASE("an XA handler gets the call's trace context in XaRequest::trace", "[sdk][trace]") {
  Fixture f;
  JsonClient client(f.port);
  client.SetHeader("traceparent", kTraceparent);
  client.SetHeader("tracestate", kTracestate);
  REQUIRE(client.Post("/api/Xa?gid=g1&trans_type=xa&branch_id=01&op=commit", "").status == 200);
  {
    std::lock_guard lock(f.mu);
    CheckCallersSpan(f.last_xa.trace);
  }
  JsonClient plain(f.port);
  REQUIRE(plain.Post("/api/Xa?gid=g1&trans_type=xa&branch_id=01&op=rollback", "").status == 200);
  std::lock_guard lock(f.mu);
  CHECK(f.last_xa.trace.empty());
}

TEST_CASE("a Try the initiator makes itself carries the caller's span to the participant",
          "[sdk][trace]") {
  Participant participant;
  std::mutex mu;
  std::vector<TraceContext> seen;
  participant.OnTry("/api/TransOutTry", [&](const BranchRequest& r) {
    std::lock_guard lock(mu);
    seen.push_back(r.trace);
    return BranchReply::Success();
  });
  auto port = participant.Start("127.0.0.1", 0);
  REQUIRE(port);
  const std::string base = "http://127.0.0.1:" + std::to_string(*port) + "/api";
  ParticipantServer coordinator;
  auto client = test::MakeClient(coordinator.Url("/api/settle"));
  TransOptions options;
  options.traceparent = kTraceparent;
  options.tracestate = kTracestate;
  auto outcome = RunTcc(*client, "trace-try", options, [&](Tcc& tcc) {
    auto tried = tcc.CallBranch("{}", base + "/TransOutTry", base + "/TransOutConfirm",
                                base + "/TransOutCancel");
    return tried ? Status::Ok() : tried.status();
  });
  REQUIRE(outcome.ok());
  CHECK(outcome->status == GlobalStatus::kSubmitted);
  std::lock_guard lock(mu);
  REQUIRE(seen.size() == 1);
  CheckCallersSpan(seen[0]);
}

}  // namespace
}  // namespace settle::sdk
