// settled's gRPC API (docs/protocol.md §10) end to end: DTM's dtmgimp.Dtm served by the
// settled of this process on a real socket, called through a stub generated from DTM's proto,
// driving real HTTP participants on 127.0.0.1. A transaction started over gRPC is the same
// transaction over HTTP.
#include <grpcpp/grpcpp.h>

#include <catch2/catch.hpp>

#include <map>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../../common/signing/rfc9421_keys.h"
#include "child_process.h"
#include "dtmgimp.grpc.pb.h"
#include "in_process_settled.h"
#include "log_capture.h"
#include "metrics_sample.h"
#include "participant_server.h"
#include "settle/api/access_tokens.h"
#include "settle/core/protocol.h"
#include "settle/signing/keys.h"
#include "temp_dir.h"
#include "test_ca.h"

namespace settle {
namespace {

using google::protobuf::Empty;
using testing::InProcessSettled;
using testing::ParticipantServer;

constexpr std::string_view kBody = R"({"amount":30})";

void WithGrpc(app::ServerConfig& c) {
  c.grpc.enabled = true;
  c.grpc.port = 0;
}

// A DTM gRPC client as DTM's dtmgrpc makes its calls: one channel, a stub, metadata per call.
class DtmClient {
 public:
  explicit DtmClient(
      int port,
      std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials(),
      std::string host = "127.0.0.1")
      : stub_(dtmgimp::Dtm::NewStub(
            grpc::CreateChannel(host + ":" + std::to_string(port), credentials))) {}

  void SetToken(std::string token) { token_ = std::move(token); }
  // Sent with every later call (traceparent, say).
  void AddMetadata(std::string key, std::string value) {
    metadata_.emplace_back(std::move(key), std::move(value));
  }

  grpc::Status Call(grpc::Status (dtmgimp::Dtm::Stub::*rpc)(grpc::ClientContext*,
                                                            const dtmgimp::DtmRequest&, Empty*),
                    const dtmgimp::DtmRequest& request) {
    grpc::ClientContext ctx;
    Prepare(ctx);
    Empty reply;
    grpc::Status s = (stub_.get()->*rpc)(&ctx, request, &reply);
    RememberIgnored(ctx);
    return s;
  }
  grpc::Status Submit(const dtmgimp::DtmRequest& r) { return Call(&dtmgimp::Dtm::Stub::Submit, r); }
  grpc::Status PrepareTx(const dtmgimp::DtmRequest& r) {
    return Call(&dtmgimp::Dtm::Stub::Prepare, r);
  }
  grpc::Status Abort(const dtmgimp::DtmRequest& r) { return Call(&dtmgimp::Dtm::Stub::Abort, r); }
  grpc::Status RegisterBranch(const dtmgimp::DtmBranchRequest& r) {
    grpc::ClientContext ctx;
    Prepare(ctx);
    Empty reply;
    return stub_->RegisterBranch(&ctx, r, &reply);
  }
  grpc::Status Topic(grpc::Status (dtmgimp::Dtm::Stub::*rpc)(grpc::ClientContext*,
                                                             const dtmgimp::DtmTopicRequest&,
                                                             Empty*),
                     const std::string& topic, const std::string& url) {
    grpc::ClientContext ctx;
    Prepare(ctx);
    dtmgimp::DtmTopicRequest r;
    r.set_topic(topic);
    r.set_url(url);
    Empty reply;
    return (stub_.get()->*rpc)(&ctx, r, &reply);
  }
  Result<std::string> NewGid() {
    grpc::ClientContext ctx;
    Prepare(ctx);
    dtmgimp::DtmGidReply reply;
    const grpc::Status s = stub_->NewGid(&ctx, Empty(), &reply);
    if (!s.ok()) return Status::Unavailable(s.error_message());
    return reply.gid();
  }
  dtmgimp::Dtm::Stub& stub() { return *stub_; }
  // The settle-ignored-fields metadata of the last Prepare, Submit or Abort; empty: none.
  const std::string& ignored() const { return ignored_; }

 private:
  void Prepare(grpc::ClientContext& ctx) {
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    if (!token_.empty()) ctx.AddMetadata("authorization", "Bearer " + token_);
    for (const auto& [key, value] : metadata_) ctx.AddMetadata(key, value);
  }
  void RememberIgnored(const grpc::ClientContext& ctx) {
    ignored_.clear();
    const auto& metadata = ctx.GetServerInitialMetadata();
    if (auto it = metadata.find("settle-ignored-fields"); it != metadata.end()) {
      ignored_.assign(it->second.data(), it->second.size());
    }
  }

  std::unique_ptr<dtmgimp::Dtm::Stub> stub_;
  std::string token_;
  std::vector<std::pair<std::string, std::string>> metadata_;
  std::string ignored_;
};

dtmgimp::DtmRequest SagaRequest(const std::string& gid, ParticipantServer& p,
                                std::vector<std::string> actions) {
  dtmgimp::DtmRequest r;
  r.set_gid(gid);
  r.set_transtype("saga");
  nlohmann::json steps = nlohmann::json::array();
  for (const std::string& action : actions) {
    steps.push_back({{"action", p.Url("/" + action)}, {"compensate", p.Url("/undo")}});
    r.add_binpayloads(std::string(kBody));
  }
  r.set_steps(steps.dump());
  r.mutable_transoptions();  // as dtmgrpc always sends it
  return r;
}

TEST_CASE("a saga submitted over gRPC runs its HTTP steps and is the same transaction over HTTP",
          "[grpc][saga]") {
  ParticipantServer p;
  InProcessSettled s(WithGrpc);
  REQUIRE(s.grpc_port() > 0);
  DtmClient client(s.grpc_port());
  dtmgimp::DtmRequest saga = SagaRequest("g-saga", p, {"out", "in"});
  saga.mutable_transoptions()->set_waitresult(true);
  (*saga.mutable_transoptions()->mutable_branchheaders())["Authorization"] = "Bearer b";
  const grpc::Status submitted = client.Submit(saga);
  CHECK(submitted.ok());
  CHECK(s.StatusOf("g-saga") == "succeed");
  const auto out = p.CallsTo("/out");
  REQUIRE(out.size() == 1);
  CHECK(out[0].body == kBody);
  CHECK(out[0].query.at("trans_type") == "saga");
  CHECK(out[0].headers.at("Authorization") == "Bearer b");
  CHECK(p.CountCalls("/in") == 1);

  // While one runs (its step keeps failing), the same request again is the harmless duplicate,
  // and another one is refused naming the step, as over HTTP.
  p.SetDefault("/busy", {503, "{}"});
  const dtmgimp::DtmRequest held = SagaRequest("g-held", p, {"busy", "in"});
  REQUIRE(client.Submit(held).ok());
  CHECK(client.Submit(held).ok());
  const grpc::Status other = client.Submit(SagaRequest("g-held", p, {"busy", "elsewhere"}));
  CHECK(other.error_code() == grpc::StatusCode::ABORTED);
  CHECK_THAT(other.error_message(), Catch::StartsWith("steps[1]: differs"));
  CHECK(p.CountCalls("/elsewhere") == 0);
}

TEST_CASE(
    "a saga submitted over gRPC with traceparent metadata is a span of that trace, and its "
    "calls child spans",
    "[grpc][saga][trace]") {
  ParticipantServer p;
  InProcessSettled s(WithGrpc);
  DtmClient client(s.grpc_port());
  client.AddMetadata("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
  client.AddMetadata("tracestate", "shop=7");
  dtmgimp::DtmRequest saga = SagaRequest("g-traced", p, {"out"});
  saga.mutable_transoptions()->set_waitresult(true);
  REQUIRE(client.Submit(saga).ok());
  const nlohmann::json trace = s.Query("g-traced")["transaction"]["trace"];
  CHECK(trace["trace_id"] == "0af7651916cd43dd8448eb211c80319c");
  CHECK(trace["parent_span_id"] == "b7ad6b7169203331");
  CHECK(trace["tracestate"] == "shop=7");
  const auto out = p.CallsTo("/out");
  REQUIRE(out.size() == 1);
  const std::string sent = out[0].headers.at("traceparent");
  CHECK_THAT(sent, Catch::StartsWith("00-0af7651916cd43dd8448eb211c80319c-"));
  CHECK(sent.substr(36, 16) != trace["span_id"].get<std::string>());
  CHECK(out[0].headers.at("tracestate") == "shop=7");
}

TEST_CASE("/query shows a binary payload in base64 and names its encoding, when asked",
          "[grpc][saga][query]") {
  ParticipantServer p;
  InProcessSettled s(WithGrpc);
  DtmClient client(s.grpc_port());
  dtmgimp::DtmRequest saga = SagaRequest("g-bytes", p, {"out", "in"});
  const std::string bytes("\x08\x96\x01\x12\x00\xff", 6);  // a protobuf message's, not UTF-8
  saga.set_binpayloads(0, bytes);
  saga.mutable_transoptions()->set_waitresult(true);
  REQUIRE(client.Submit(saga).ok());
  CHECK(p.CallsTo("/out").at(0).body == bytes);  // sent unchanged

  const auto shown = s.client().Get("/api/settle/query?gid=g-bytes&payloads=true");
  REQUIRE(shown.status == 200);
  std::map<std::string, nlohmann::json> by_branch;
  for (const auto& b : shown.json["branches"]) {
    by_branch[b["branch_id"].get<std::string>() + ":" + b["op"].get<std::string>()] = b;
  }
  CHECK(by_branch["01:action"]["data_encoding"] == "base64");
  CHECK(by_branch["01:action"]["data"] == "CJYBEgD/");
  CHECK(by_branch["02:action"]["data_encoding"] == "utf-8");
  CHECK(by_branch["02:action"]["data"] == std::string(kBody));
  // Not shown unless asked; a value other than true or false is a 400 naming it.
  for (const auto& b : s.Query("g-bytes")["branches"]) CHECK_FALSE(b.contains("data"));
  const auto bad = s.client().Get("/api/settle/query?gid=g-bytes&payloads=yes");
  CHECK(bad.status == 400);
  CHECK_THAT(bad.json["message"].get<std::string>(), Catch::StartsWith("payloads:"));
}

TEST_CASE("a TCC over gRPC: its submit confirms the registered branches, its abort cancels them",
          "[grpc][tcc]") {
  ParticipantServer p;
  InProcessSettled s(WithGrpc);
  DtmClient client(s.grpc_port());
  for (const std::string gid : {"g-commit", "g-abort"}) {
    dtmgimp::DtmRequest tcc;
    tcc.set_gid(gid);
    tcc.set_transtype("tcc");
    tcc.set_steps("null");
    REQUIRE(client.PrepareTx(tcc).ok());
    for (const std::string id : {"01", "02"}) {
      dtmgimp::DtmBranchRequest branch;
      branch.set_gid(gid);
      branch.set_transtype("tcc");
      branch.set_branchid(id);
      branch.set_busipayload(std::string(kBody));
      (*branch.mutable_data())["confirm"] = p.Url("/confirm" + id);
      (*branch.mutable_data())["cancel"] = p.Url("/cancel" + id);
      REQUIRE(client.RegisterBranch(branch).ok());
    }
    tcc.mutable_transoptions()->set_waitresult(true);
    if (gid == "g-commit") {
      CHECK(client.Submit(tcc).ok());
    } else {
      tcc.set_rollbackreason("the Try of 02 failed");
      // A completed wait_result abort is DTM's FAILURE: ABORTED with the reason.
      const grpc::Status aborted = client.Abort(tcc);
      CHECK(aborted.error_code() == grpc::StatusCode::ABORTED);
      CHECK(aborted.error_message() == "the Try of 02 failed");
    }
  }
  CHECK(s.StatusOf("g-commit") == "succeed");
  CHECK(s.StatusOf("g-abort") == "failed");
  CHECK(p.CountCalls("/confirm01") == 1);
  CHECK(p.CountCalls("/confirm02") == 1);
  CHECK(p.CountCalls("/cancel01") == 1);
  CHECK(p.CountCalls("/cancel02") == 1);
  CHECK(p.CallsTo("/confirm01").at(0).body == kBody);
}

TEST_CASE("a message over gRPC: topics subscribed over gRPC, prepared, submitted, delivered",
          "[grpc][msg][topics]") {
  ParticipantServer p;
  InProcessSettled s(WithGrpc);
  DtmClient client(s.grpc_port());
  REQUIRE(client.Topic(&dtmgimp::Dtm::Stub::Subscribe, "orders", p.Url("/points")).ok());
  REQUIRE(client.Topic(&dtmgimp::Dtm::Stub::Subscribe, "orders", p.Url("/mail")).ok());
  CHECK(client.Topic(&dtmgimp::Dtm::Stub::Subscribe, "orders", p.Url("/mail")).error_code() ==
        grpc::StatusCode::ABORTED);  // subscribed already
  dtmgimp::DtmRequest msg;
  msg.set_gid("g-msg");
  msg.set_transtype("msg");
  msg.set_steps(nlohmann::json::array({{{"action", "topic://orders"}}}).dump());
  msg.add_binpayloads(std::string(kBody));
  msg.set_queryprepared(p.Url("/query"));
  REQUIRE(client.PrepareTx(msg).ok());
  CHECK(s.StatusOf("g-msg") == "prepared");
  REQUIRE(client.Submit(msg).ok());
  REQUIRE(p.WaitForCalls("/mail", 1));
  CHECK(p.CountCalls("/points") == 1);
  CHECK(p.CallsTo("/mail").at(0).body == kBody);
  REQUIRE(s.WaitForStatus("g-msg", "succeed"));
  CHECK(client.Topic(&dtmgimp::Dtm::Stub::Unsubscribe, "orders", p.Url("/mail")).ok());
  CHECK(client.Topic(&dtmgimp::Dtm::Stub::DeleteTopic, "orders", "").ok());
  CHECK(s.client().Get("/api/settle/topics").json["topics"].empty());
}

TEST_CASE("an XA over gRPC rolls its branches back on abort", "[grpc][xa]") {
  ParticipantServer p;
  InProcessSettled s(WithGrpc);
  DtmClient client(s.grpc_port());
  dtmgimp::DtmRequest xa;
  xa.set_gid("g-xa");
  xa.set_transtype("xa");
  REQUIRE(client.PrepareTx(xa).ok());
  dtmgimp::DtmBranchRequest branch;
  branch.set_gid("g-xa");
  branch.set_transtype("xa");
  branch.set_branchid("01");
  (*branch.mutable_data())["url"] = p.Url("/xa");
  REQUIRE(client.RegisterBranch(branch).ok());
  REQUIRE(client.Abort(xa).ok());
  REQUIRE(p.WaitForCalls("/xa", 1));
  CHECK(p.CallsTo("/xa").at(0).query.at("op") == "rollback");
  CHECK(s.WaitForStatus("g-xa", "failed"));
}

TEST_CASE("NewGid answers a fresh gid", "[grpc]") {
  InProcessSettled s(WithGrpc);
  DtmClient client(s.grpc_port());
  auto a = client.NewGid();
  auto b = client.NewGid();
  REQUIRE(a);
  REQUIRE(b);
  CHECK(IsValidGid(*a));
  CHECK(*a != *b);
}

TEST_CASE("bad input over gRPC is INVALID_ARGUMENT naming the field, and nothing is stored",
          "[grpc][bad-input]") {
  ParticipantServer p;
  InProcessSettled s([](app::ServerConfig& c) {
    WithGrpc(c);
    c.api.max_body_bytes = 4096;
  });
  DtmClient client(s.grpc_port());
  dtmgimp::DtmRequest r = SagaRequest("g-bad", p, {"a", "b"});
  r.add_binpayloads("one too many");
  grpc::Status refused = client.Submit(r);
  CHECK(refused.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK_THAT(refused.error_message(), Catch::StartsWith("BinPayloads: 3 payloads for 2 steps"));
  r = SagaRequest("g-bad", p, {"a"});
  r.set_steps(R"([{"action":"http://p/a","compensate":5}])");
  CHECK_THAT(client.Submit(r).error_message(), Catch::StartsWith("Steps[0].compensate:"));
  r = SagaRequest("g bad", p, {"a"});
  CHECK_THAT(client.Submit(r).error_message(), Catch::StartsWith("Gid:"));
  r = SagaRequest("g-bad", p, {"a"});
  r.mutable_transoptions()->set_timeouttofail(-5);
  CHECK_THAT(client.Submit(r).error_message(),
             Catch::StartsWith("TransOptions.TimeoutToFail: must be a whole number of seconds"));
  // A message over the size limit is refused before it is read.
  r = SagaRequest("g-big", p, {"a"});
  r.set_binpayloads(0, std::string(8192, 'x'));
  CHECK(client.Submit(r).error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED);
  CHECK(s.StatusOf("g-bad").empty());
  CHECK(s.StatusOf("g-big").empty());
  CHECK(client.Submit(SagaRequest("g-good", p, {"a"})).ok());  // still serving
}

TEST_CASE("unknown fields over gRPC are named in metadata, or refused when strict",
          "[grpc][fields]") {
  ParticipantServer p;
  dtmgimp::DtmRequest r = SagaRequest("g-1", p, {"a"});
  r.GetReflection()->MutableUnknownFields(&r)->AddVarint(42, 1);  // a field of a newer proto
  r.set_steps(nlohmann::json::array({{{"action", p.Url("/a")}, {"actoin", "x"}}}).dump());
  SECTION("by default") {
    InProcessSettled s(WithGrpc);
    DtmClient client(s.grpc_port());
    CHECK(client.Submit(r).ok());
    CHECK(client.ignored() == "#42, steps[0].actoin");
  }
  SECTION("with --strict-requests") {
    InProcessSettled s([](app::ServerConfig& c) {
      WithGrpc(c);
      c.coordinator.strict_requests = true;
    });
    DtmClient client(s.grpc_port());
    const grpc::Status refused = client.Submit(r);
    CHECK(refused.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
    CHECK_THAT(refused.error_message(), Catch::StartsWith("#42: unknown field"));
    CHECK(s.StatusOf("g-1").empty());
  }
}

TEST_CASE("the HTTP API's tokens guard the gRPC API, read from authorization metadata",
          "[grpc][auth]") {
  testing::LogCapture log;
  ParticipantServer p;
  InProcessSettled s([](app::ServerConfig& c) {
    WithGrpc(c);
    REQUIRE(c.api.tokens.Add(api::Access::kRead, "reader-token-0123456789abcdef").ok());
    REQUIRE(c.api.tokens.Add(api::Access::kClient, "client-token-0123456789abcdef").ok());
  });
  DtmClient client(s.grpc_port());
  const grpc::Status anonymous = client.Submit(SagaRequest("g-1", p, {"a"}));
  CHECK(anonymous.error_code() == grpc::StatusCode::UNAUTHENTICATED);
  client.SetToken("reader-token-0123456789abcdef");
  const grpc::Status reader = client.Submit(SagaRequest("g-1", p, {"a"}));
  CHECK(reader.error_code() == grpc::StatusCode::PERMISSION_DENIED);
  CHECK_THAT(reader.error_message(), Catch::Contains("Submit needs client"));
  client.SetToken("client-token-0123456789abcdef");
  CHECK(client.Submit(SagaRequest("g-1", p, {"a"})).ok());
  CHECK(client.Topic(&dtmgimp::Dtm::Stub::DeleteTopic, "t", "").error_code() ==
        grpc::StatusCode::PERMISSION_DENIED);  // admin only, as over HTTP
  client.SetToken("unknown-token-0123456789abcdef");
  CHECK(client.Submit(SagaRequest("g-2", p, {"a"})).error_code() ==
        grpc::StatusCode::UNAUTHENTICATED);

  // Each refusal logged once, with the caller's address, the method and the reason (the
  // token's name, never the token), and counted on the grpc port.
  const std::vector<std::string> lines = log.LinesWith("gRPC API refused");
  REQUIRE(lines.size() == 4);
  CHECK_THAT(lines[0], Catch::Contains("refused Submit from 127.0.0.1: 401 reason=no_credentials"));
  CHECK_THAT(lines[1],
             Catch::Contains("refused Submit from 127.0.0.1: 403 reason=access_too_low") &&
                 Catch::Contains("('read-token-1') grants read access"));
  CHECK_THAT(lines[2], Catch::Contains("refused DeleteTopic from 127.0.0.1: 403 "
                                       "reason=access_too_low"));
  CHECK_THAT(lines[3], Catch::Contains("refused Submit from 127.0.0.1: 401 reason=unknown_token"));
  CHECK_THAT(log.Text(), !Catch::Contains("0123456789abcdef"));
  testing::JsonClient http_reader(s.port());
  http_reader.SetHeader("Authorization", "Bearer reader-token-0123456789abcdef");
  const std::string metrics = http_reader.Get("/api/metrics").body;
  auto refusals = [&](const std::string& status, const std::string& reason) {
    return testing::SampleValue(metrics, "settle_api_refusals_total{port=\"grpc\",status=\"" +
                                             status + "\",reason=\"" + reason + "\"}");
  };
  CHECK(refusals("401", "no_credentials") == 1);
  CHECK(refusals("401", "unknown_token") == 1);
  CHECK(refusals("403", "access_too_low") == 2);
  CHECK(testing::SampleValue(
            metrics,
            "settle_api_refusals_total{port=\"http\",status=\"403\",reason=\"access_too_low\"}") ==
        0);
}

TEST_CASE(
    "over gRPC too, another client's TCC is refused as an absent gid, its topic is not "
    "another's to subscribe to, and a quota is RESOURCE_EXHAUSTED",
    "[grpc][tenancy]") {
  ParticipantServer p;
  InProcessSettled s([](app::ServerConfig& c) {
    WithGrpc(c);
    REQUIRE(c.api.tokens.Add(api::Access::kClient, "client-a-token-0123456789", "service-a").ok());
    REQUIRE(c.api.tokens.Add(api::Access::kClient, "client-b-token-0123456789", "service-b").ok());
    c.coordinator.quotas.unfinished = 1;
  });
  DtmClient a(s.grpc_port());
  a.SetToken("client-a-token-0123456789");
  DtmClient b(s.grpc_port());
  b.SetToken("client-b-token-0123456789");
  dtmgimp::DtmRequest tcc;
  tcc.set_gid("grpc-tcc-a");
  tcc.set_transtype("tcc");
  tcc.set_steps("null");
  (*tcc.mutable_transoptions()->mutable_branchheaders())["Authorization"] = "Bearer SECRET-A";
  REQUIRE(a.PrepareTx(tcc).ok());

  auto branch_of = [&p](const std::string& gid) {
    dtmgimp::DtmBranchRequest branch;
    branch.set_gid(gid);
    branch.set_transtype("tcc");
    branch.set_branchid("02");
    branch.set_busipayload(std::string(kBody));
    (*branch.mutable_data())["confirm"] = p.Url("/confirm-b");
    (*branch.mutable_data())["cancel"] = p.Url("/cancel-b");
    return branch;
  };
  const grpc::Status on_taken = b.RegisterBranch(branch_of("grpc-tcc-a"));
  const grpc::Status on_absent = b.RegisterBranch(branch_of("grpc-tcc-z"));
  CHECK(on_taken.error_code() == on_absent.error_code());
  CHECK(on_taken.error_code() == grpc::StatusCode::ABORTED);
  CHECK(on_taken.error_message() == "no transaction with gid grpc-tcc-a");
  CHECK(on_absent.error_message() == "no transaction with gid grpc-tcc-z");
  CHECK(b.Abort(tcc).error_message() == "no transaction with gid grpc-tcc-a");

  REQUIRE(a.Topic(&dtmgimp::Dtm::Stub::Subscribe, "orders-a", p.Url("/orders")).ok());
  const grpc::Status stolen = b.Topic(&dtmgimp::Dtm::Stub::Subscribe, "orders-a", p.Url("/steal"));
  CHECK(stolen.error_code() == grpc::StatusCode::ABORTED);
  CHECK(stolen.error_message() == "topic orders-a belongs to another client");

  // A holds its one unfinished transaction.
  dtmgimp::DtmRequest second = tcc;
  second.set_gid("grpc-tcc-a2");
  const grpc::Status exhausted = a.PrepareTx(second);
  CHECK(exhausted.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED);
  CHECK_THAT(exhausted.error_message(),
             Catch::StartsWith("quota: ") && Catch::Contains("--quota-unfinished"));

  tcc.mutable_transoptions()->set_waitresult(true);
  CHECK(a.Abort(tcc).error_code() == grpc::StatusCode::ABORTED);  // failed, as asked
  CHECK(p.CountCalls("/cancel-b") == 0);
  CHECK(p.CountCalls("/confirm-b") == 0);
}

std::string FileText(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST_CASE("a gRPC connection idle past --keep-alive-timeout is closed, and the client reconnects",
          "[grpc][limits]") {
  InProcessSettled s([](app::ServerConfig& c) {
    WithGrpc(c);
    c.api.keep_alive_timeout = Duration(300);
  });
  auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string(s.grpc_port()),
                                     grpc::InsecureChannelCredentials());
  auto stub = dtmgimp::Dtm::NewStub(channel);
  auto new_gid = [&] {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    dtmgimp::DtmGidReply reply;
    return stub->NewGid(&ctx, Empty(), &reply).ok() && !reply.gid().empty();
  };
  REQUIRE(new_gid());
  REQUIRE(channel->GetState(/*try_to_connect=*/false) == GRPC_CHANNEL_READY);
  // The server's GOAWAY moves the channel out of READY: waited for, with a deadline.
  const auto deadline = std::chrono::system_clock::now() + std::chrono::seconds(20);
  REQUIRE(channel->WaitForStateChange(GRPC_CHANNEL_READY, deadline));
  CHECK(channel->GetState(false) != GRPC_CHANNEL_READY);
  CHECK(new_gid());  // a new connection, transparently
}

TEST_CASE("with --tls-cert the gRPC API is served over TLS only", "[grpc][tls]") {
  testing::TempDir dir;
  testing::TestCa ca(dir.path());
  const testing::TestCa::Issued cert = ca.IssueForLocalhost();
  ParticipantServer p;
  InProcessSettled s(
      [&](app::ServerConfig& c) {
        WithGrpc(c);
        c.api.tls = {cert.cert_file, cert.key_file};
      },
      ca.ca_file());
  grpc::SslCredentialsOptions trust;
  trust.pem_root_certs = FileText(ca.ca_file());
  DtmClient secure(s.grpc_port(), grpc::SslCredentials(trust), "localhost");
  CHECK(secure.Submit(SagaRequest("g-tls", p, {"a"})).ok());
  DtmClient plain(s.grpc_port());
  CHECK(plain.Submit(SagaRequest("g-plain", p, {"a"})).error_code() ==
        grpc::StatusCode::UNAVAILABLE);
  CHECK(s.StatusOf("g-plain").empty());
}

// Credentials of a gRPC client that trusts `ca` and presents `client` (none: no certificate).
std::shared_ptr<grpc::ChannelCredentials> MutualTls(const testing::TestCa& ca,
                                                    const testing::TestCa::Issued* client) {
  grpc::SslCredentialsOptions tls;
  tls.pem_root_certs = FileText(ca.ca_file());
  if (client != nullptr) {
    tls.pem_cert_chain = FileText(client->cert_file);
    tls.pem_private_key = FileText(client->key_file);
  }
  return grpc::SslCredentials(tls);
}

// --tls-client-ca and --client-certificates on the gRPC port (docs/protocol.md §1.3), as on
// the HTTP port: a certificate from the client CA is the caller its subject is mapped to; one
// from another CA, an expired one, or none when one is required ends at the handshake.
TEST_CASE("with a client CA the gRPC API knows callers by their certificates",
          "[grpc][tls][mtls]") {
  const bool required = GENERATE(false, true);
  INFO((required ? "--require-client-cert" : "certificates asked for, tokens beside them"));
  testing::TempDir dir;
  testing::TestCa ca(dir.path());
  testing::TestCa clients(dir.path(), "clients");
  testing::TestCa stranger(dir.path(), "stranger");
  const testing::TestCa::Issued server = ca.IssueForLocalhost();
  const testing::TestCa::Issued order = clients.IssueClient("order", "/O=Shop/CN=order-service");
  const testing::TestCa::Issued auditor = clients.IssueClient("auditor", "/O=Shop/CN=auditor");
  // Without a CN, which gRPC does not call an authenticated peer: known by its subject still.
  const testing::TestCa::Issued robot = clients.IssueClient("robot", "/O=Shop/OU=Robots");
  // What the test reads transactions with, over the HTTP API.
  const testing::TestCa::Issued test = clients.IssueClient("test", "/O=Shop/CN=test");
  const testing::TestCa::Issued unmapped = clients.IssueClient("unmapped", "/O=Shop/CN=intruder");
  const testing::TestCa::Issued expired =
      clients.IssueExpiredClient("expired", "/O=Shop/CN=order-service");
  const testing::TestCa::Issued foreign =
      stranger.IssueClient("foreign", "/O=Shop/CN=order-service");
  const std::string token = "client-token-0123456789";
  ParticipantServer p;
  InProcessSettled s(
      [&](app::ServerConfig& c) {
        WithGrpc(c);
        c.api.tls = {.cert_file = server.cert_file,
                     .key_file = server.key_file,
                     .client_ca_file = clients.ca_file(),
                     .require_client_certificate = required};
        REQUIRE(c.api.client_certificates
                    .AddFromText("client CN=order-service,O=Shop\n"
                                 "read CN=auditor,O=Shop # audit\n"
                                 "read CN=test,O=Shop\n"
                                 "client OU=Robots,O=Shop # robot\n")
                    .ok());
        REQUIRE(c.api.tokens.Add(api::Access::kClient, token, "tokened").ok());
      },
      ca.ca_file(), test.cert_file, test.key_file);
  auto client = [&](const testing::TestCa::Issued* certificate) {
    return DtmClient(s.grpc_port(), MutualTls(ca, certificate), "localhost");
  };

  DtmClient ordered = client(&order);
  CHECK(ordered.Submit(SagaRequest("g-cert", p, {"a"})).ok());
  CHECK(s.WaitForStatus("g-cert", "succeed"));

  DtmClient robotic = client(&robot);
  CHECK(robotic.Submit(SagaRequest("g-robot", p, {"a"})).ok());

  DtmClient reader = client(&auditor);
  const grpc::Status denied = reader.Submit(SagaRequest("g-read", p, {"a"}));
  CHECK(denied.error_code() == grpc::StatusCode::PERMISSION_DENIED);
  CHECK_THAT(denied.error_message(), Catch::Contains("this certificate ('audit') grants read"));

  DtmClient intruder = client(&unmapped);
  const grpc::Status unknown = intruder.Submit(SagaRequest("g-unmapped", p, {"a"}));
  CHECK(unknown.error_code() == grpc::StatusCode::UNAUTHENTICATED);
  CHECK_THAT(unknown.error_message(), Catch::Contains("'CN=intruder,O=Shop' is not mapped"));
  // A token beside an unmapped certificate is judged alone.
  intruder.SetToken(token);
  CHECK(intruder.Submit(SagaRequest("g-token", p, {"a"})).ok());

  // Refused at the handshake: nothing of these calls reaches the API.
  DtmClient stale = client(&expired);
  CHECK(stale.Submit(SagaRequest("g-expired", p, {"a"})).error_code() ==
        grpc::StatusCode::UNAVAILABLE);
  DtmClient forged = client(&foreign);
  CHECK(forged.Submit(SagaRequest("g-foreign", p, {"a"})).error_code() ==
        grpc::StatusCode::UNAVAILABLE);
  DtmClient bare = client(nullptr);
  bare.SetToken(token);
  const grpc::Status without = bare.Submit(SagaRequest("g-bare", p, {"a"}));
  if (required) {
    CHECK(without.error_code() == grpc::StatusCode::UNAVAILABLE);
    CHECK(s.StatusOf("g-bare").empty());
  } else {
    CHECK(without.ok());  // a token instead of a certificate
  }
  for (const char* gid : {"g-read", "g-unmapped", "g-expired", "g-foreign"}) {
    CHECK(s.StatusOf(gid).empty());
  }
  // And the port keeps serving.
  CHECK(ordered.Submit(SagaRequest("g-after", p, {"a"})).ok());
}

// DTM's clients and participants know nothing of signatures: with settled signing its calls
// (docs/protocol.md §4.9) they work unchanged, the participants ignoring the added fields.
TEST_CASE("a client that is not ours, Python's grpcio with DTM's proto, drives every mode",
          "[grpc][interop]") {
  const bool signing = GENERATE(false, true);
  INFO((signing ? "settled signs its calls" : "signing off"));
  ParticipantServer p;
  InProcessSettled s([&](app::ServerConfig& c) {
    WithGrpc(c);
    if (signing) {
      auto key = signing::SigningKey::FromText(signing::testing::kRfcEd25519Private);
      REQUIRE(key.ok());
      c.signing_key = *key;
    }
  });
  testing::TempDir work;
  const std::string log = work.File("client.log");
  testing::ChildProcess client(
      {"/usr/bin/python3", std::string(SETTLE_INTEROP_DIR) + "/dtm_grpc_client.py",
       std::to_string(s.grpc_port()), p.Url(""), SETTLE_DTM_PROTO_DIR, work.path()},
      log);
  // The script stops itself after 80 s; it prints its last line in any case.
  const std::string last = client.WaitForLine("python grpc client:", std::chrono::seconds(90));
  const int exit_status = client.Wait(std::chrono::seconds(20));
  INFO("the Python client's stderr (" << log << "):\n" << FileText(log));
  REQUIRE(last == "python grpc client: done");
  CHECK(exit_status == 0);
  // To the HTTP participant.
  CHECK(s.StatusOf("py-saga") == "succeed");
  CHECK(s.StatusOf("py-tcc") == "succeed");
  CHECK(p.CallsTo("/TransIn").at(0).body == R"({"amount": 30})");
  // What DTM's participants ignore: the signature settled added, or none.
  for (const auto& header : {"Signature-Input", "Signature", "Content-Digest"}) {
    CHECK(p.CallsTo("/TransIn").at(0).headers.count(header) == (signing ? 1u : 0u));
  }
  CHECK(p.CountCalls("/Confirm01") == 1);
  CHECK(p.CountCalls("/Confirm02") == 1);
  REQUIRE(p.WaitForCalls("/Points", 1));
  CHECK(s.WaitForStatus("py-msg", "succeed"));
  CHECK(s.StatusOf("py-bad").empty());
  // To the Python gRPC participants (the script checked each call they received).
  CHECK(s.StatusOf("py-grpc-saga") == "failed");
  CHECK(s.WaitForStatus("py-grpc-ongoing", "succeed"));
  CHECK(s.StatusOf("py-grpc-tcc") == "succeed");
  CHECK(s.StatusOf("py-grpc-tcc-abort") == "failed");
  CHECK(s.WaitForStatus("py-grpc-msg", "succeed"));
  CHECK(s.WaitForStatus("py-grpc-msg-check", "succeed"));
}

}  // namespace
}  // namespace settle
