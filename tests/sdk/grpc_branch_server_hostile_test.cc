// GrpcBranchServer against hostile clients (issue 43, attack 2): connections from 127.0.0.2
// holding calls whose request message never wholly arrives. Its own server (Start) refuses the
// connections beyond its caps at accept, ends every stalled call at first_message_timeout,
// and serves a call from 127.0.0.1 meanwhile; a server mounted on a builder of the service's
// own has the same caps on the port ListenFor opens.
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "eventually.h"
#include "settle/sdk/grpc_branch_server.h"
#include "stalled_grpc.h"

namespace settle::sdk {
namespace {

using testing::StalledGrpcConnection;

constexpr const char* kMethod = "/bank.Bank/TransIn";

// A branch call of kMethod from 127.0.0.1, as settled makes it; its status within 5 s.
grpc::Status CallBranch(int port) {
  auto channel =
      grpc::CreateChannel("127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  for (const auto& [key, value] :
       {std::pair{"dtm-gid", "g-1"}, std::pair{"dtm-trans_type", "saga"},
        std::pair{"dtm-branch_id", "01"}, std::pair{"dtm-op", "action"}}) {
    ctx.AddMetadata(key, value);
  }
  grpc::Slice slice(std::string("{}"));
  grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  std::promise<grpc::Status> done;
  stub.UnaryCall(&ctx, kMethod, grpc::StubOptions(), &request, &response,
                 [&done](grpc::Status s) { done.set_value(std::move(s)); });
  return done.get_future().get();
}

TEST_CASE(
    "GrpcBranchServer caps connections per peer and ends calls stalled before their message "
    "while serving others",
    "[sdk][grpc][hostile]") {
  GrpcBranchServer branches({.threads = 4,
                             .max_connections = 60,
                             .max_connections_per_peer = 40,
                             .first_message_timeout = Duration(1000)});
  branches.OnBranch(kMethod, [](const BranchRequest&) { return BranchReply::Success(); });
  const Result<int> port = branches.Start("127.0.0.1", 0);
  REQUIRE(port.ok());

  std::vector<std::unique_ptr<StalledGrpcConnection>> stalled;
  for (int i = 0; i < 45; ++i) {
    stalled.push_back(std::make_unique<StalledGrpcConnection>(
        StalledGrpcConnection::Plan{.port = *port, .path = kMethod, .streams = 5}));
  }
  int refused = 0;
  int served = 0;
  REQUIRE(testing::Eventually([&] {
    refused = served = 0;
    for (auto& c : stalled) {
      c->Poll();
      refused += c->RefusedAtAccept() ? 1 : 0;
      served += c->received() > 0 ? 1 : 0;
    }
    return refused + served == 45;
  }));
  CHECK(refused == 5);
  CHECK(branches.bound_counts().refused_connections == 5);
  CHECK(branches.bound_counts().open_connections >= 40);
  // Another host is served meanwhile.
  CHECK(CallBranch(*port).ok());

  // Every stalled call ends within the 1 s deadline and a margin.
  REQUIRE(testing::Eventually(
      [&] {
        int ended = 0;
        for (auto& c : stalled) {
          c->Poll();
          ended += c->ended_streams();
        }
        return ended == 40 * 5;
      },
      std::chrono::seconds(4)));
  const GrpcBranchServerCounts counts = branches.bound_counts();
  CHECK(counts.waiting_calls == 0);
  CHECK(counts.first_message_timeouts + counts.waiting_refusals == 40 * 5);
  CHECK(counts.first_message_timeouts > 0);
  CHECK(CallBranch(*port).ok());
  branches.Stop();
}

TEST_CASE(
    "a GrpcBranchServer mounted on a service's builder caps the connections of the port "
    "ListenFor opens, and the service's server serves within them",
    "[sdk][grpc][hostile]") {
  GrpcBranchServer branches({.threads = 4,
                             .max_connections = 12,
                             .max_connections_per_peer = 8,
                             .first_message_timeout = Duration(60'000)});
  branches.OnBranch(kMethod, [](const BranchRequest&) { return BranchReply::Success(); });
  grpc::ServerBuilder builder;
  REQUIRE(branches.MountOn(builder).ok());
  const Result<int> port =
      branches.ListenFor(builder, "127.0.0.1", 0, grpc::InsecureServerCredentials());
  REQUIRE(port.ok());
  CHECK_FALSE(branches.ListenFor(builder, "127.0.0.1", 0, grpc::InsecureServerCredentials()));
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  REQUIRE(server != nullptr);
  branches.AcceptConnections();

  std::vector<std::unique_ptr<StalledGrpcConnection>> stalled;
  for (int i = 0; i < 11; ++i) {
    stalled.push_back(std::make_unique<StalledGrpcConnection>(
        StalledGrpcConnection::Plan{.port = *port, .path = kMethod}));
  }
  int refused = 0;
  int served = 0;
  REQUIRE(testing::Eventually([&] {
    refused = served = 0;
    for (auto& c : stalled) {
      c->Poll();
      refused += c->RefusedAtAccept() ? 1 : 0;
      served += c->received() > 0 ? 1 : 0;
    }
    return refused + served == 11;
  }));
  CHECK(refused == 3);  // beyond the 8 of 127.0.0.2
  CHECK(branches.bound_counts().refused_connections == 3);
  CHECK(branches.bound_counts().open_connections == 8);
  // Another host is served by the service's server meanwhile.
  CHECK(CallBranch(*port).ok());

  branches.Stop();
  server->Shutdown();
}

}  // namespace
}  // namespace settle::sdk
