// A participant's branches as gRPC methods (grpc_branch_server.h), driven by the settle of
// this process over real sockets: the same BranchRequest, handlers and barrier as over HTTP,
// and the status codes DTM's gRPC protocol reads.
#include "settle/sdk/grpc_branch_server.h"

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <catch2/catch.hpp>

#include <atomic>
#include <string>

#include "in_process_settled.h"
#include "settle/sdk/sqlite_barrier_store.h"
#include "temp_dir.h"

namespace settle::sdk {
namespace {

using nlohmann::json;
using testing::InProcessSettled;

// Calls `method` of 127.0.0.1:port as the coordinator does, with `metadata`; the status.
grpc::Status CallAsCoordinator(int port, const std::string& method,
                               std::vector<std::pair<std::string, std::string>> metadata,
                               const std::string& body) {
  auto channel =
      grpc::CreateChannel("127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  for (const auto& [k, v] : metadata) ctx.AddMetadata(k, v);
  grpc::Slice slice(body);
  grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  std::promise<grpc::Status> done;
  stub.UnaryCall(&ctx, method, grpc::StubOptions(), &request, &response,
                 [&done](grpc::Status s) { done.set_value(std::move(s)); });
  return done.get_future().get();
}

std::vector<std::pair<std::string, std::string>> Dtm(const std::string& gid, const char* op) {
  return {{"dtm-gid", gid},
          {"dtm-trans_type", "saga"},
          {"dtm-branch_id", "01"},
          {"dtm-op", op},
          {"dtm-dtm", ""}};
}

TEST_CASE("a saga's gRPC branches run their handlers, FAILURE compensates", "[sdk][grpc][saga]") {
  std::mutex mu;
  std::vector<BranchRequest> seen;
  GrpcBranchServer server;
  auto record = [&](BranchReply reply) {
    return [&, reply](const BranchRequest& r) {
      std::lock_guard lock(mu);
      seen.push_back(r);
      return reply;
    };
  };
  server.OnAction("/bank.Bank/TransOut", record(BranchReply::Success()))
      .OnCompensate("/bank.Bank/TransOutRevert", record(BranchReply::Success()))
      .OnAction("/bank.Bank/TransIn", record(BranchReply::Failure("account closed")));
  auto port = server.Start("127.0.0.1", 0);
  REQUIRE(port);
  const std::string base = "127.0.0.1:" + std::to_string(*port);
  InProcessSettled s;
  const json saga = {{"gid", "g1"},
                     {"trans_type", "saga"},
                     {"steps",
                      {{{"action", base + "/bank.Bank/TransOut"},
                        {"compensate", base + "/bank.Bank/TransOutRevert"}},
                       {{"action", base + "/bank.Bank/TransIn"}, {"compensate", ""}}}},
                     {"payloads", {"\x08\x1e", "{}"}},
                     {"wait_result", true}};
  const auto r = s.Call("submit", saga);
  CHECK(r.status == 409);  // failed: the FAILURE rolled it back
  CHECK(s.StatusOf("g1") == "failed");
  std::lock_guard lock(mu);
  REQUIRE(seen.size() == 3);
  CHECK(seen[0].path == "/bank.Bank/TransOut");
  CHECK(seen[0].gid == "g1");
  CHECK(seen[0].op == BranchOp::kAction);
  CHECK(seen[0].body == "\x08\x1e");
  CHECK(seen[1].path == "/bank.Bank/TransIn");
  CHECK(seen[2].op == BranchOp::kCompensate);
}

TEST_CASE(
    "the barrier guards gRPC branches: a duplicate runs nothing, an empty compensation "
    "is skipped",
    "[sdk][grpc][barrier]") {
  testing::TempDir dir;
  auto store = SqliteBarrierStore::Open(dir.File("barrier.db"));
  REQUIRE(store);
  SystemClock clock;
  Barrier barrier(**store, clock);
  std::atomic<int> ran{0};
  GrpcBranchServer server;
  auto business = Guarded(barrier, [&](const BranchRequest&, BarrierTransaction&) {
    ++ran;
    return Status::Ok();
  });
  server.OnBranch("/bank.Bank/TransOut", business);
  auto port = server.Start("127.0.0.1", 0);
  REQUIRE(port);
  // A compensation that arrives first is an empty rollback: skipped, SUCCESS; the action
  // after it is hanging: refused with FAILURE (ABORTED).
  CHECK(CallAsCoordinator(*port, "/bank.Bank/TransOut", Dtm("g2", "compensate"), "{}").ok());
  const grpc::Status hanging =
      CallAsCoordinator(*port, "/bank.Bank/TransOut", Dtm("g2", "action"), "{}");
  CHECK(hanging.error_code() == grpc::StatusCode::ABORTED);
  CHECK(ran == 0);
  CHECK(CallAsCoordinator(*port, "/bank.Bank/TransOut", Dtm("g3", "action"), "{}").ok());
  CHECK(CallAsCoordinator(*port, "/bank.Bank/TransOut", Dtm("g3", "action"), "{}").ok());
  CHECK(ran == 1);  // the duplicate ran nothing
}

TEST_CASE(
    "bad metadata is ABORTED naming the key, an unknown method UNIMPLEMENTED, a throw "
    "INTERNAL",
    "[sdk][grpc][bad-input]") {
  GrpcBranchServer server;
  server.OnBranch("/bank.Bank/Ok", [](const BranchRequest&) { return BranchReply::Success(); });
  server.OnBranch("/bank.Bank/Throws",
                  [](const BranchRequest&) -> BranchReply { throw std::runtime_error("boom"); });
  server.OnConfirm("/bank.Bank/Confirm",
                   [](const BranchRequest&) { return BranchReply::Success(); });
  server.OnBranch("/bank.Bank/Later",
                  [](const BranchRequest&) { return BranchReply::Ongoing("not yet"); });
  auto port = server.Start("127.0.0.1", 0);
  REQUIRE(port);
  auto no_gid = Dtm("", "action");
  no_gid.erase(no_gid.begin());
  const grpc::Status missing = CallAsCoordinator(*port, "/bank.Bank/Ok", no_gid, "");
  CHECK(missing.error_code() == grpc::StatusCode::ABORTED);
  CHECK_THAT(missing.error_message(), Catch::StartsWith("dtm-gid"));
  CHECK(CallAsCoordinator(*port, "/bank.Bank/None", Dtm("g1", "action"), "").error_code() ==
        grpc::StatusCode::UNIMPLEMENTED);
  const grpc::Status threw = CallAsCoordinator(*port, "/bank.Bank/Throws", Dtm("g1", "action"), "");
  CHECK(threw.error_code() == grpc::StatusCode::INTERNAL);
  CHECK_THAT(threw.error_message(), Catch::Contains("boom"));
  CHECK(CallAsCoordinator(*port, "/bank.Bank/Confirm", Dtm("g1", "cancel"), "").error_code() ==
        grpc::StatusCode::ABORTED);  // another op than the method serves
  CHECK(CallAsCoordinator(*port, "/bank.Bank/Later", Dtm("g1", "action"), "").error_code() ==
        grpc::StatusCode::FAILED_PRECONDITION);
  CHECK(CallAsCoordinator(*port, "/bank.Bank/Ok", Dtm("g1", "action"), "").ok());
}

}  // namespace
}  // namespace settle::sdk
