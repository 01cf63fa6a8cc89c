// The initiators over DTM's gRPC API (grpc_client.h): a saga, a TCC, a message and an XA
// transaction started through the settle of this process's gRPC port, with their branches
// served as gRPC methods by the SDK's GrpcBranchServer over real sockets.
#include "settle/sdk/grpc_client.h"

#include <catch2/catch.hpp>

#include <mutex>
#include <string>
#include <vector>

#include "in_process_settled.h"
#include "settle/sdk/grpc_branch_server.h"
#include "settle/sdk/msg.h"
#include "settle/sdk/saga.h"
#include "settle/sdk/tcc.h"
#include "settle/sdk/xa.h"

namespace settle::sdk {
namespace {

using testing::InProcessSettled;

// settled with its gRPC API on a free port, and optionally access tokens.
InProcessSettled GrpcSettled(bool tokens = false) {
  return InProcessSettled([tokens](app::ServerConfig& c) {
    c.grpc.enabled = true;
    if (tokens) {
      REQUIRE(c.api.tokens.Add(api::Access::kClient, "client-token-0123456789abcdef").ok());
    }
  });
}

std::string GrpcOf(const InProcessSettled& s) {
  return "grpc://127.0.0.1:" + std::to_string(s.grpc_port());
}
std::string HttpOf(const InProcessSettled& s) {
  return "http://127.0.0.1:" + std::to_string(s.port()) + "/api/settle";
}

// What a gRPC participant saw: method, op, gid, branch, bytes and one header.
struct Seen {
  std::string path;
  BranchOp op;
  std::string gid;
  std::string branch_id;
  std::string body;
  std::string header;
};

// A GrpcBranchServer whose handlers record each call and answer as told.
class Recorder {
 public:
  BranchHandler Answer(BranchReply reply) {
    return [this, reply](const BranchRequest& r) {
      std::lock_guard lock(mu_);
      auto it = r.headers.find("x-tenant");
      seen_.push_back(
          Seen{r.path, r.op, r.gid, r.branch_id, r.body, it == r.headers.end() ? "" : it->second});
      return reply;
    };
  }
  std::vector<Seen> seen() {
    std::lock_guard lock(mu_);
    return seen_;
  }
  std::vector<std::string> Calls() {
    std::vector<std::string> out;
    for (const Seen& s : seen()) out.push_back(s.path + " " + std::string(ToString(s.op)));
    return out;
  }

 private:
  std::mutex mu_;
  std::vector<Seen> seen_;
};

std::unique_ptr<GrpcClient> ClientOf(const InProcessSettled& s, GrpcClientOptions options = {}) {
  if (options.http_server.empty()) options.http_server = HttpOf(s);
  auto client = GrpcClient::Create(GrpcOf(s), std::move(options));
  REQUIRE(client);
  return std::move(*client);
}

// Bytes that are no JSON and no UTF-8: a protobuf message's are like these.
const std::string kBinary("\x08\x96\x01\x12\x00\xff\xfe", 7);

TEST_CASE("a saga submitted over gRPC runs its gRPC steps with their bytes unchanged",
          "[sdk][grpc_client][saga]") {
  Recorder bank;
  GrpcBranchServer server;
  server.OnAction("/bank.Bank/TransOut", bank.Answer(BranchReply::Success()))
      .OnAction("/bank.Bank/TransIn", bank.Answer(BranchReply::Success()))
      .OnCompensate("/bank.Bank/Revert", bank.Answer(BranchReply::Success()));
  auto port = server.Start("127.0.0.1", 0);
  REQUIRE(port);
  const std::string base = "grpc://127.0.0.1:" + std::to_string(*port);
  InProcessSettled s = GrpcSettled();
  auto client = ClientOf(s);

  auto gid = client->NewGid();
  REQUIRE(gid);
  Saga saga(*client, *gid);
  saga.Add(base + "/bank.Bank/TransOut", base + "/bank.Bank/Revert", kBinary)
      .Add(base + "/bank.Bank/TransIn", base + "/bank.Bank/Revert", "second");
  saga.options().wait_result = true;
  saga.options().branch_headers = {{"X-Tenant", "acme"}};
  auto outcome = saga.Submit();
  REQUIRE(outcome);
  CHECK(outcome->status == GlobalStatus::kSucceed);

  const auto seen = bank.seen();
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].path == "/bank.Bank/TransOut");
  CHECK(seen[0].body == kBinary);
  CHECK(seen[0].gid == *gid);
  CHECK(seen[0].header == "acme");
  CHECK(seen[1].body == "second");
  // The same transaction the HTTP API shows, through the client's query.
  auto info = client->Query(*gid);
  REQUIRE(info);
  REQUIRE(info->has_value());
  CHECK((*info)->trans_type == TransType::kSaga);
  CHECK((*info)->status == GlobalStatus::kSucceed);
}

TEST_CASE("a saga over gRPC whose step answers ABORTED is compensated and ends failed",
          "[sdk][grpc_client][saga]") {
  Recorder bank;
  GrpcBranchServer server;
  server.OnAction("/bank.Bank/TransOut", bank.Answer(BranchReply::Success()))
      .OnAction("/bank.Bank/TransIn", bank.Answer(BranchReply::Failure("account closed")))
      .OnCompensate("/bank.Bank/TransOutRevert", bank.Answer(BranchReply::Success()))
      .OnCompensate("/bank.Bank/TransInRevert", bank.Answer(BranchReply::Success()));
  auto port = server.Start("127.0.0.1", 0);
  REQUIRE(port);
  const std::string base = "127.0.0.1:" + std::to_string(*port);  // DTM's form
  InProcessSettled s = GrpcSettled();
  auto client = ClientOf(s);

  Saga saga(*client, "grpc-saga-fails");
  saga.Add(base + "/bank.Bank/TransOut", base + "/bank.Bank/TransOutRevert", "a")
      .Add(base + "/bank.Bank/TransIn", base + "/bank.Bank/TransInRevert", "b");
  saga.options().wait_result = true;
  auto outcome = saga.Submit();
  REQUIRE(outcome);
  CHECK(outcome->status == GlobalStatus::kFailed);
  CHECK(s.StatusOf("grpc-saga-fails") == "failed");
  CHECK(bank.Calls() == std::vector<std::string>{"/bank.Bank/TransOut action",
                                                 "/bank.Bank/TransIn action",
                                                 "/bank.Bank/TransInRevert compensate",
                                                 "/bank.Bank/TransOutRevert compensate"});
}

TEST_CASE("a TCC over gRPC calls its gRPC Trys itself and settled confirms them",
          "[sdk][grpc_client][tcc]") {
  Recorder bank;
  GrpcBranchServer server;
  server.OnTry("/bank.Bank/TransOutTry", bank.Answer(BranchReply::Success("reserved")))
      .OnConfirm("/bank.Bank/TransOutConfirm", bank.Answer(BranchReply::Success()))
      .OnCancel("/bank.Bank/TransOutCancel", bank.Answer(BranchReply::Success()));
  auto port = server.Start("127.0.0.1", 0);
  REQUIRE(port);
  const std::string base = "grpc://127.0.0.1:" + std::to_string(*port) + "/bank.Bank/TransOut";
  InProcessSettled s = GrpcSettled();
  auto client = ClientOf(s);

  TransOptions options;
  options.wait_result = true;
  options.branch_headers = {{"x-tenant", "acme"}};
  auto outcome = RunTcc(*client, "grpc-tcc", options, [&](Tcc& tcc) -> Status {
    auto reply = tcc.CallBranch(kBinary, base + "Try", base + "Confirm", base + "Cancel");
    if (!reply) return reply.status();
    CHECK(*reply == "reserved");  // the Try's answer message, as bytes
    return Status::Ok();
  });
  REQUIRE(outcome);
  CHECK(outcome->status == GlobalStatus::kSucceed);
  REQUIRE(s.WaitForStatus("grpc-tcc", "succeed"));
  const auto seen = bank.seen();
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].op == BranchOp::kTry);
  CHECK(seen[0].branch_id == "01");
  CHECK(seen[0].gid == "grpc-tcc");
  CHECK(seen[0].body == kBinary);
  CHECK(seen[0].header == "acme");  // the initiator's own call carries branch_headers too
  CHECK(seen[1].op == BranchOp::kConfirm);
  CHECK(seen[1].body == kBinary);  // the registered bytes
}

TEST_CASE("a TCC over gRPC whose Try answers ABORTED is cancelled", "[sdk][grpc_client][tcc]") {
  Recorder bank;
  GrpcBranchServer server;
  server.OnTry("/bank.Bank/Try", bank.Answer(BranchReply::Failure("insufficient funds")))
      .OnConfirm("/bank.Bank/Confirm", bank.Answer(BranchReply::Success()))
      .OnCancel("/bank.Bank/Cancel", bank.Answer(BranchReply::Success()));
  auto port = server.Start("127.0.0.1", 0);
  REQUIRE(port);
  const std::string base = "127.0.0.1:" + std::to_string(*port) + "/bank.Bank/";
  InProcessSettled s = GrpcSettled();
  auto client = ClientOf(s);

  TransOptions options;
  options.wait_result = true;
  auto outcome = RunTcc(*client, "grpc-tcc-no", options, [&](Tcc& tcc) -> Status {
    auto reply = tcc.CallBranch("x", base + "Try", base + "Confirm", base + "Cancel");
    CHECK(reply.status().code() == StatusCode::kConflict);
    CHECK_THAT(reply.status().message(), Catch::Contains("ABORTED: insufficient funds"));
    return reply.status();
  });
  REQUIRE(outcome);
  CHECK(outcome->status == GlobalStatus::kFailed);
  REQUIRE(s.WaitForStatus("grpc-tcc-no", "failed"));
  CHECK(bank.Calls() == std::vector<std::string>{"/bank.Bank/Try try", "/bank.Bank/Cancel cancel"});
}

TEST_CASE("a message over gRPC is delivered to its gRPC step after it was prepared",
          "[sdk][grpc_client][msg]") {
  Recorder shop;
  GrpcBranchServer server;
  server.OnAction("/shop.Shop/Ship", shop.Answer(BranchReply::Success()))
      .OnBranch("/shop.Shop/QueryPrepared", shop.Answer(BranchReply::Success()));
  auto port = server.Start("127.0.0.1", 0);
  REQUIRE(port);
  const std::string base = "grpc://127.0.0.1:" + std::to_string(*port) + "/shop.Shop/";
  InProcessSettled s = GrpcSettled();
  auto client = ClientOf(s);

  Msg msg(*client, "grpc-msg");
  msg.Add(base + "Ship", kBinary);
  msg.options().wait_result = true;
  REQUIRE(msg.Prepare(base + "QueryPrepared").ok());
  CHECK(s.StatusOf("grpc-msg") == "prepared");
  auto outcome = msg.Submit();
  REQUIRE(outcome);
  CHECK(outcome->status == GlobalStatus::kSucceed);
  const auto seen = shop.seen();
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].path == "/shop.Shop/Ship");
  CHECK(seen[0].body == kBinary);

  SECTION("a message delivered in parallel is refused before anything is sent") {
    Msg parallel(*client, "grpc-msg-parallel");
    parallel.Add(base + "Ship", "x").EnableConcurrent();
    auto refused = parallel.Submit();
    REQUIRE_FALSE(refused);
    CHECK(refused.status().code() == StatusCode::kInvalidArgument);
    CHECK_THAT(refused.status().message(), Catch::StartsWith("concurrent:"));
    CHECK(s.StatusOf("grpc-msg-parallel").empty());
  }
  SECTION("an aborted prepared message is failed and never delivered") {
    Msg aborted(*client, "grpc-msg-aborted");
    aborted.Add(base + "Ship", "x");
    REQUIRE(aborted.Prepare(base + "QueryPrepared").ok());
    auto outcome = aborted.Abort();
    REQUIRE(outcome);
    CHECK(s.StatusOf("grpc-msg-aborted") == "failed");
    CHECK(shop.seen().size() == 1);
  }
}

TEST_CASE("an XA transaction over gRPC: the gRPC branch registers itself over gRPC",
          "[sdk][grpc_client][xa]") {
  InProcessSettled s = GrpcSettled();
  auto participant_link = ClientOf(s);
  Recorder bank;
  const BranchHandler record = bank.Answer(BranchReply::Success());
  // An XA participant as DTM's gRPC protocol has it: on op=action it prepares its local
  // transaction (here: nothing to do) and registers the branch with the coordinator itself,
  // naming the phase-2 method it was told in dtm-phase2_url (OnXa refuses an action without).
  GrpcBranchServer server;
  server.OnXa("/bank.Bank/Xa", [&](const BranchRequest& r) -> BranchReply {
    record(r);
    if (r.op != BranchOp::kAction) return BranchReply::Success();
    auto phase2 = r.headers.find("dtm-phase2_url");
    if (phase2 == r.headers.end()) return BranchReply::Failure("no dtm-phase2_url");
    const Result<RegisteredBranch> registered =
        participant_link->RegisterBranch(BranchRegistration{.gid = r.gid,
                                                            .trans_type = "xa",
                                                            .branch_id = r.branch_id,
                                                            .urls = {{"url", phase2->second}}});
    return registered ? BranchReply::Success() : BranchReply::Error(registered.status());
  });
  auto port = server.Start("127.0.0.1", 0);
  REQUIRE(port);
  const std::string url = "grpc://127.0.0.1:" + std::to_string(*port) + "/bank.Bank/Xa";
  auto client = ClientOf(s);

  TransOptions options;
  options.wait_result = true;
  auto outcome = RunXa(*client, "grpc-xa", options, [&](Xa& xa) -> Status {
    auto done = xa.CallBranch("debit 30", url);
    return done ? Status::Ok() : done.status();
  });
  REQUIRE(outcome);
  CHECK(outcome->status == GlobalStatus::kSucceed);
  REQUIRE(s.WaitForStatus("grpc-xa", "succeed"));
  const auto seen = bank.seen();
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].op == BranchOp::kAction);
  CHECK(seen[0].body == "debit 30");
  CHECK(seen[1].op == BranchOp::kCommit);
}

TEST_CASE("the gRPC client refuses what it cannot do, naming why, and sends nothing",
          "[sdk][grpc_client][errors]") {
  SECTION("a server that is no gRPC address") {
    for (const std::string server : {"http://127.0.0.1:36790", "", "grpc://"}) {
      auto client = GrpcClient::Create(server);
      REQUIRE_FALSE(client);
      CHECK_THAT(client.status().message(), Catch::Contains("expected grpc://host:port"));
    }
  }
  SECTION("metadata gRPC cannot carry, an unreadable CA file, a bad HTTP API") {
    auto upper = GrpcClient::Create("127.0.0.1:1", {.metadata = {{"Authorization", "x"}}});
    CHECK_THAT(upper.status().message(), Catch::StartsWith("metadata.Authorization:"));
    auto ca = GrpcClient::Create("127.0.0.1:1", {.ca_file = "/nonexistent/ca.pem"});
    CHECK_THAT(ca.status().message(), Catch::StartsWith("ca_file: cannot read"));
    auto http = GrpcClient::Create("127.0.0.1:1", {.http_server = "ftp://x"});
    CHECK_THAT(http.status().message(), Catch::StartsWith("http_server:"));
  }
  SECTION("no query, and no HTTP Try, without the HTTP API") {
    auto client = GrpcClient::Create("127.0.0.1:1");
    REQUIRE(client);
    CHECK((*client)->Query("g").status().code() == StatusCode::kInvalidArgument);
    CHECK_THAT((*client)->CheckOwnBranchUrl("http://127.0.0.1:2/try").message(),
               Catch::Contains("http_server"));
    CHECK((*client)->CheckOwnBranchUrl("grpc://127.0.0.1:2/a.B/Try").ok());
  }
  SECTION("a coordinator that does not answer is Unavailable within the timeout") {
    // Port 1: nothing listens there.
    auto client = GrpcClient::Create("127.0.0.1:1", {.timeout = std::chrono::milliseconds(300)});
    REQUIRE(client);
    auto gid = (*client)->NewGid();
    REQUIRE_FALSE(gid);
    CHECK(gid.status().code() == StatusCode::kUnavailable);
    CHECK_THAT(gid.status().message(), Catch::StartsWith("NewGid: "));
  }
}

TEST_CASE("the gRPC client sends its metadata: settled's tokens guard the gRPC API",
          "[sdk][grpc_client][tokens]") {
  InProcessSettled s = GrpcSettled(/*tokens=*/true);
  auto anonymous = GrpcClient::Create(GrpcOf(s));
  REQUIRE(anonymous);
  auto refused = (*anonymous)->NewGid();
  REQUIRE_FALSE(refused);
  CHECK(refused.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(refused.status().message(), Catch::Contains("UNAUTHENTICATED"));

  auto client = GrpcClient::Create(
      GrpcOf(s), {.metadata = {{"authorization", "Bearer client-token-0123456789abcdef"}}});
  REQUIRE(client);
  CHECK((*client)->NewGid());
}

}  // namespace
}  // namespace settle::sdk
