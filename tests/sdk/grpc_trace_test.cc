// W3C Trace Context over gRPC: the traceparent and tracestate metadata the gRPC client sends a
// coordinator (here a recording fake that serves every method, as DTM's gRPC API is called) and
// its own Try calls, and what GrpcBranchServer gives a handler in BranchRequest::trace.
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <future>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "grpc_participant.h"
#include "settle/sdk/grpc_branch_server.h"
#include "settle/sdk/grpc_client.h"
#include "settle/sdk/msg.h"
#include "settle/sdk/saga.h"
#include "settle/sdk/tcc.h"

namespace settle::sdk {
namespace {

using settle::testing::GrpcCall;
using settle::testing::GrpcParticipant;

constexpr const char* kTraceId = "4bf92f3577b34da6a3ce929d0e0e4736";
constexpr const char* kSpanId = "00f067aa0ba902b7";
constexpr const char* kTraceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
constexpr const char* kTracestate = "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE";

using Values = std::vector<std::string>;

Values MetadataValues(const GrpcCall& call, const std::string& key) {
  Values values;
  const auto [first, last] = call.metadata.equal_range(key);
  for (auto it = first; it != last; ++it) values.push_back(it->second);
  return values;
}

// Every call of `method` carried the trace context (or, with `sent` false, none); how many.
std::size_t CheckCalls(const GrpcParticipant& server, const std::string& method, bool sent) {
  const std::vector<GrpcCall> calls = server.CallsTo(method);
  for (const GrpcCall& call : calls) {
    CAPTURE(method);
    CHECK(MetadataValues(call, "traceparent") == (sent ? Values{kTraceparent} : Values{}));
    CHECK(MetadataValues(call, "tracestate") == (sent ? Values{kTracestate} : Values{}));
  }
  return calls.size();
}

std::unique_ptr<GrpcClient> ClientOf(const GrpcParticipant& coordinator,
                                     GrpcClientOptions options = {}) {
  auto client =
      GrpcClient::Create("grpc://127.0.0.1:" + std::to_string(coordinator.port()), options);
  REQUIRE(client);
  return std::move(*client);
}

TransOptions Traced(std::string traceparent = kTraceparent) {
  TransOptions options;
  options.traceparent = std::move(traceparent);
  options.tracestate = kTracestate;
  return options;
}

// One Try, at the fake's own bank.Bank/Try: its registration, then the call.
Status OneTry(Tcc& tcc, const GrpcParticipant& server) {
  const std::string base = "grpc://127.0.0.1:" + std::to_string(server.port()) + "/bank.Bank/";
  auto tried = tcc.CallBranch("bytes", base + "Try", base + "Confirm", base + "Cancel");
  return tried ? Status::Ok() : tried.status();
}

TEST_CASE("the gRPC client sends a transaction's traceparent and tracestate as metadata",
          "[sdk][grpc_client][trace]") {
  GrpcParticipant coordinator;
  auto client = ClientOf(coordinator, {.metadata = {{"traceparent", "00-old"}, {"x-token", "t"}}});
  auto outcome = RunTcc(*client, "grpc-trace-tcc", Traced(),
                        [&](Tcc& tcc) { return OneTry(tcc, coordinator); });
  REQUIRE(outcome.ok());
  CHECK(outcome->status == GlobalStatus::kSubmitted);
  CHECK(CheckCalls(coordinator, "/dtmgimp.Dtm/Prepare", true) == 1);
  CHECK(CheckCalls(coordinator, "/dtmgimp.Dtm/RegisterBranch", true) == 1);
  CHECK(CheckCalls(coordinator, "/dtmgimp.Dtm/Submit", true) == 1);
  // The Try the initiator made itself, as its own metadata.
  CHECK(CheckCalls(coordinator, "/bank.Bank/Try", true) == 1);
  // The client's other metadata goes as ever; its traceparent gave way to the transaction's.
  CHECK(coordinator.CallsTo("/dtmgimp.Dtm/Prepare")[0].Meta("x-token") == "t");

  REQUIRE(RunTcc(*client, "grpc-trace-abort", Traced(), [](Tcc&) {
            return Status::Conflict("no");
          }).ok());
  CHECK(CheckCalls(coordinator, "/dtmgimp.Dtm/Abort", true) == 1);

  Saga saga(*client, "grpc-trace-saga");
  saga.Add("grpc://127.0.0.1:1/bank.Bank/Out", "", "bytes").SetOptions(Traced());
  REQUIRE(saga.Submit().ok());
  Msg msg(*client, "grpc-trace-msg");
  msg.Add("grpc://127.0.0.1:1/bank.Bank/In", "bytes").SetOptions(Traced());
  REQUIRE(msg.Prepare("grpc://127.0.0.1:1/bank.Bank/QueryPrepared").ok());
  REQUIRE(msg.Abort().ok());
  CHECK(CheckCalls(coordinator, "/dtmgimp.Dtm/Submit", true) == 2);
  CHECK(CheckCalls(coordinator, "/dtmgimp.Dtm/Prepare", true) == 3);
  CHECK(CheckCalls(coordinator, "/dtmgimp.Dtm/Abort", true) == 2);
}

TEST_CASE("the gRPC client sends no trace metadata for an invalid traceparent or none",
          "[sdk][grpc_client][trace]") {
  for (const std::string traceparent :
       {"", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0",
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01"}) {
    CAPTURE(traceparent);
    GrpcParticipant coordinator;
    auto client = ClientOf(coordinator);
    auto outcome = RunTcc(*client, "grpc-trace-none", Traced(traceparent),
                          [&](Tcc& tcc) { return OneTry(tcc, coordinator); });
    REQUIRE(outcome.ok());
    CHECK(outcome->status == GlobalStatus::kSubmitted);
    CHECK(CheckCalls(coordinator, "/dtmgimp.Dtm/Prepare", false) == 1);
    CHECK(CheckCalls(coordinator, "/dtmgimp.Dtm/RegisterBranch", false) == 1);
    CHECK(CheckCalls(coordinator, "/dtmgimp.Dtm/Submit", false) == 1);
    CHECK(CheckCalls(coordinator, "/bank.Bank/Try", false) == 1);
  }
}

// Calls `method` of 127.0.0.1:port as the coordinator calls a branch, with `metadata`.
grpc::Status CallAsCoordinator(int port, const std::string& method,
                               const std::vector<std::pair<std::string, std::string>>& metadata) {
  auto channel =
      grpc::CreateChannel("127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  for (const auto& [k, v] : metadata) ctx.AddMetadata(k, v);
  grpc::Slice slice(std::string("{}"));
  grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  std::promise<grpc::Status> done;
  stub.UnaryCall(&ctx, method, grpc::StubOptions(), &request, &response,
                 [&done](grpc::Status s) { done.set_value(std::move(s)); });
  return done.get_future().get();
}

// A GrpcBranchServer whose handlers keep the trace of each call.
struct TraceRecorder {
  GrpcBranchServer server;
  int port = 0;
  std::mutex mu;
  std::vector<TraceContext> traces;

  TraceRecorder() {
    auto record = [this](const BranchRequest& r) {
      std::lock_guard lock(mu);
      traces.push_back(r.trace);
      return BranchReply::Success();
    };
    server.OnBranch("/bank.Bank/TransOut", record).OnXa("/bank.Bank/Xa", record);
    auto started = server.Start("127.0.0.1", 0);
    REQUIRE(started);
    port = *started;
  }
  // The trace the handler saw for a call of `method` with the dtm-* metadata of `trans_type`
  // and `op`, and `trace`.
  TraceContext Call(const std::string& method, const std::string& trans_type, const char* op,
                    const std::vector<std::pair<std::string, std::string>>& trace) {
    std::vector<std::pair<std::string, std::string>> metadata = {{"dtm-gid", "g1"},
                                                                 {"dtm-trans_type", trans_type},
                                                                 {"dtm-branch_id", "01"},
                                                                 {"dtm-op", op},
                                                                 {"dtm-dtm", ""}};
    metadata.insert(metadata.end(), trace.begin(), trace.end());
    REQUIRE(CallAsCoordinator(port, method, metadata).ok());
    std::lock_guard lock(mu);
    REQUIRE(!traces.empty());
    return traces.back();
  }
};

TEST_CASE("a gRPC branch handler gets the call's trace metadata in BranchRequest::trace",
          "[sdk][grpc][trace]") {
  TraceRecorder bank;
  const TraceContext trace =
      bank.Call("/bank.Bank/TransOut", "saga", "action",
                {{"traceparent", kTraceparent}, {"tracestate", kTracestate}});
  CHECK(trace.trace_id == kTraceId);
  CHECK(trace.span_id == kSpanId);
  CHECK(trace.parent_id.empty());
  CHECK(trace.flags == 1);
  CHECK(trace.state == kTracestate);
  // An XA method's phase 2 alike.
  CHECK(bank.Call("/bank.Bank/Xa", "xa", "commit", {{"traceparent", kTraceparent}}).span_id ==
        kSpanId);
  // Two tracestate entries are one list.
  CHECK(bank.Call("/bank.Bank/TransOut", "saga", "action",
                  {{"traceparent", kTraceparent},
                   {"tracestate", "rojo=00f067aa0ba902b7"},
                   {"tracestate", "congo=t61rcWkgMzE"}})
            .state == kTracestate);
  // None, an invalid one, or two: empty.
  CHECK(bank.Call("/bank.Bank/TransOut", "saga", "action", {}).empty());
  CHECK(bank.Call("/bank.Bank/TransOut", "saga", "action",
                  {{"traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7"},
                   {"tracestate", kTracestate}}) == TraceContext{});
  CHECK(bank.Call("/bank.Bank/TransOut", "saga", "action",
                  {{"traceparent", kTraceparent}, {"traceparent", kTraceparent}})
            .empty());
}

TEST_CASE("a gRPC Try the initiator makes itself carries the caller's span to the participant",
          "[sdk][grpc_client][trace]") {
  TraceRecorder bank;
  GrpcParticipant coordinator;
  auto client = ClientOf(coordinator);
  const std::string base = "grpc://127.0.0.1:" + std::to_string(bank.port) + "/bank.Bank/";
  auto outcome = RunTcc(*client, "grpc-trace-try", Traced(), [&](Tcc& tcc) {
    auto tried = tcc.CallBranch("bytes", base + "TransOut", base + "TransOut", base + "TransOut");
    return tried ? Status::Ok() : tried.status();
  });
  REQUIRE(outcome.ok());
  CHECK(outcome->status == GlobalStatus::kSubmitted);
  std::lock_guard lock(bank.mu);
  REQUIRE(bank.traces.size() == 1);
  CHECK(bank.traces[0].trace_id == kTraceId);
  CHECK(bank.traces[0].span_id == kSpanId);
  CHECK(bank.traces[0].state == kTracestate);
}

}  // namespace
}  // namespace settle::sdk
