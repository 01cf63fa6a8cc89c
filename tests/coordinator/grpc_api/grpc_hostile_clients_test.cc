// The gRPC API of the real settled binary against hostile clients (issue 43, attack 2): a few
// hundred connections from 127.0.0.2, each holding calls whose request message never wholly
// arrives. The connection caps refuse the excess at accept, every stalled call is ended by
// --grpc-first-message-timeout (or refused at once past --grpc-memory-limit's budget), a call
// without a token is refused at its headers, settled's memory stays bounded, and meanwhile a
// gRPC call and HTTP's /api/ping from 127.0.0.1 are answered.
#include <grpcpp/grpcpp.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "dtmgimp.grpc.pb.h"
#include "eventually.h"
#include "file_text.h"
#include "json_client.h"
#include "metrics_sample.h"
#include "resident_memory.h"
#include "settled_process.h"
#include "stalled_grpc.h"
#include "temp_dir.h"
#include "test_ca.h"

namespace settle {
namespace {

using testing::JsonClient;
using testing::ResidentKiB;
using testing::SampleValue;
using testing::StalledGrpcConnection;
using testing::TempDir;
using Clock = std::chrono::steady_clock;

constexpr const char* kToken = "hostile-test-client-token";

// A gRPC NewGid from 127.0.0.1 with the client token (over TLS when `tls` is given, the server
// verified as localhost): the status, within 5 s.
grpc::Status NewGid(int port, std::shared_ptr<grpc::ChannelCredentials> tls = nullptr) {
  grpc::ChannelArguments arguments;
  if (tls != nullptr) arguments.SetSslTargetNameOverride("localhost");
  auto stub = dtmgimp::Dtm::NewStub(grpc::CreateCustomChannel(
      "127.0.0.1:" + std::to_string(port),
      tls != nullptr ? tls : grpc::InsecureChannelCredentials(), arguments));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  ctx.AddMetadata("authorization", std::string("Bearer ") + kToken);
  google::protobuf::Empty request;
  dtmgimp::DtmGidReply reply;
  grpc::Status status = stub->NewGid(&ctx, request, &reply);
  if (status.ok() && reply.gid().empty()) return {grpc::StatusCode::INTERNAL, "empty gid"};
  return status;
}

std::vector<std::unique_ptr<StalledGrpcConnection>> Open(int count,
                                                         const StalledGrpcConnection::Plan& plan) {
  std::vector<std::unique_ptr<StalledGrpcConnection>> connections;
  for (int i = 0; i < count; ++i)
    connections.push_back(std::make_unique<StalledGrpcConnection>(plan));
  return connections;
}

// Polls every connection; how many were refused at accept and how many the server answered.
struct Seen {
  int refused = 0;
  int answered = 0;  // received the server's first bytes
  int streams_ended = 0;
};
Seen PollAll(std::vector<std::unique_ptr<StalledGrpcConnection>>& connections) {
  Seen seen;
  for (auto& c : connections) {
    c->Poll();
    if (c->RefusedAtAccept()) ++seen.refused;
    if (c->received() > 0) ++seen.answered;
    seen.streams_ended += c->ended_streams();
  }
  return seen;
}

TEST_CASE(
    "gRPC calls stalled before their message from one host are capped, refused past the memory "
    "budget and ended at the first-message deadline while others are served",
    "[grpc][process][hostile]") {
  TempDir dir;
  testing::SettledWithGrpc settled(
      dir.File("settle.db"),
      {"--client-token", kToken, "--grpc-max-connections", "300", "--grpc-max-connections-per-peer",
       "240", "--grpc-first-message-timeout", "2s", "--grpc-memory-limit",
       std::to_string(16 << 20)},
      dir.File("settled"));
  const pid_t pid = settled.process->process().pid();
  JsonClient http(settled.process->port());
  http.SetHeader("Authorization", std::string("Bearer ") + kToken);
  REQUIRE(NewGid(settled.grpc_port).ok());
  const long before = ResidentKiB(pid);
  REQUIRE(before > 0);

  // 250 connections of 20 calls each, with the token (authenticated stalls: the hard case),
  // each call's 1000-byte message sent 10 bytes in.
  const auto started = Clock::now();
  auto stalled = Open(250, {.port = settled.grpc_port, .token = kToken, .streams = 20});

  // The per-peer cap refuses 10 at accept; the other 240 are served (the server's SETTINGS).
  long peak = before;
  Seen seen;
  REQUIRE(testing::Eventually([&] {
    seen = PollAll(stalled);
    peak = std::max(peak, ResidentKiB(pid));
    return seen.refused + seen.answered == 250;
  }));
  CHECK(seen.refused == 10);
  CHECK(seen.answered == 240);

  // Meanwhile, another host is served over gRPC and HTTP.
  const grpc::Status probe = NewGid(settled.grpc_port);
  CHECK(probe.ok());
  CHECK(http.Get("/api/ping").status == 200);
  const std::string metrics = http.Get("/api/metrics").body;
  CHECK(SampleValue(metrics,
                    "settle_grpc_connections_refused_total{cap=\"max_connections_per_peer\"}") ==
        10);
  // 16 MiB holds 170 waiting calls: the rest were refused at once.
  CHECK(SampleValue(metrics, "settle_grpc_calls_cut_total{reason=\"memory_limit\"}") > 0);
  CHECK(SampleValue(metrics, "settle_grpc_calls_waiting") <= 170);

  // Every stalled call is ended by the server within the deadline (2 s) and a margin.
  REQUIRE(testing::Eventually(
      [&] {
        seen = PollAll(stalled);
        peak = std::max(peak, ResidentKiB(pid));
        return seen.streams_ended == 240 * 20;
      },
      std::chrono::seconds(6)));
  CHECK(Clock::now() - started < std::chrono::seconds(6));
  const std::string after = http.Get("/api/metrics").body;
  CHECK(SampleValue(after, "settle_grpc_calls_waiting") == 0);
  CHECK(SampleValue(after, "settle_grpc_calls_cut_total{reason=\"first_message_timeout\"}") > 0);
  // 4,800 stalled calls took settled from 28 to 565 MB before (170 connections of 256): now
  // its growth is the connections' and the budget's.
  INFO("VmRSS before " << before << " KiB, peak " << peak << " KiB");
  CHECK(peak - before < 48 * 1024);
  CHECK(NewGid(settled.grpc_port).ok());
}

TEST_CASE("a gRPC call without a token is refused at its headers, its message never awaited",
          "[grpc][process][hostile]") {
  TempDir dir;
  testing::SettledWithGrpc settled(
      dir.File("settle.db"), {"--client-token", kToken, "--grpc-first-message-timeout", "60s"},
      dir.File("settled"));
  JsonClient http(settled.process->port());
  http.SetHeader("Authorization", std::string("Bearer ") + kToken);
  auto stalled = Open(20, {.port = settled.grpc_port, .streams = 10});
  // Ended long before the 60 s deadline: UNAUTHENTICATED as soon as the headers are read.
  REQUIRE(testing::Eventually([&] { return PollAll(stalled).streams_ended == 20 * 10; },
                              std::chrono::seconds(10)));
  const std::string metrics = http.Get("/api/metrics").body;
  CHECK(SampleValue(metrics, "settle_grpc_calls_waiting") == 0);
  CHECK(SampleValue(metrics, "settle_grpc_calls_cut_total{reason=\"first_message_timeout\"}") == 0);
  CHECK(NewGid(settled.grpc_port).ok());
}

TEST_CASE(
    "gRPC connections beyond --grpc-max-connections are closed at accept and the HTTP API "
    "still answers",
    "[grpc][process][hostile]") {
  TempDir dir;
  testing::SettledWithGrpc settled(dir.File("settle.db"),
                                   {"--client-token", kToken, "--grpc-max-connections", "100",
                                    "--grpc-max-connections-per-peer", "0"},
                                   dir.File("settled"));
  JsonClient http(settled.process->port());
  http.SetHeader("Authorization", std::string("Bearer ") + kToken);
  auto stalled = Open(150, {.port = settled.grpc_port, .token = kToken});
  Seen seen;
  REQUIRE(testing::Eventually([&] {
    seen = PollAll(stalled);
    return seen.refused + seen.answered == 150;
  }));
  CHECK(seen.refused == 50);
  const std::string metrics = http.Get("/api/metrics").body;
  CHECK(SampleValue(metrics, "settle_grpc_connections") == 100);
  CHECK(SampleValue(metrics, "settle_grpc_connections_refused_total{cap=\"max_connections\"}") ==
        50);
  CHECK(http.Get("/api/ping").status == 200);
  // The cap is full: a new client is refused (UNAVAILABLE) until a slot frees.
  CHECK(NewGid(settled.grpc_port).error_code() == grpc::StatusCode::UNAVAILABLE);
  // Once the stalled clients go, their slots are counted free again.
  stalled.clear();
  REQUIRE(testing::Eventually(
      [&] { return SampleValue(http.Get("/api/metrics").body, "settle_grpc_connections") == 0; }));
  CHECK(NewGid(settled.grpc_port).ok());
}

TEST_CASE(
    "over TLS, gRPC connections beyond the cap are closed at accept and those that never "
    "handshake are cut at the first-message timeout",
    "[grpc][process][hostile][tls]") {
  TempDir dir;
  testing::TestCa ca(dir.path());
  const testing::TestCa::Issued cert = ca.IssueForLocalhost();
  testing::SettledWithGrpc settled(
      dir.File("settle.db"),
      {"--client-token", kToken, "--tls-cert", cert.cert_file, "--tls-key", cert.key_file,
       "--grpc-max-connections", "5", "--grpc-max-connections-per-peer", "0",
       "--grpc-first-message-timeout", "1s"},
      dir.File("settled"));
  grpc::SslCredentialsOptions trust;
  trust.pem_root_certs = testing::ReadFile(ca.ca_file());
  const auto tls = grpc::SslCredentials(trust);
  auto silent = Open(8, {.port = settled.grpc_port, .silent = true});
  const auto started = Clock::now();
  int closed = 0;
  // Three are closed at accept, at once; the five held never handshake, which takes 1 s.
  REQUIRE(testing::Eventually([&] {
    closed = 0;
    for (auto& c : silent) {
      c->Poll();
      closed += c->closed() ? 1 : 0;
    }
    return closed >= 3;
  }));
  if (Clock::now() - started < std::chrono::milliseconds(900)) CHECK(closed == 3);
  // Then the handshake timeout cuts the five, and TLS clients are served again.
  REQUIRE(testing::Eventually(
      [&] {
        closed = 0;
        for (auto& c : silent) {
          c->Poll();
          closed += c->closed() ? 1 : 0;
        }
        return closed == 8;
      },
      std::chrono::seconds(5)));
  for (auto& c : silent) CHECK(c->received() == 0);
  CHECK(testing::Eventually([&] { return NewGid(settled.grpc_port, tls).ok(); },
                            std::chrono::seconds(5), std::chrono::milliseconds(200)));
}

}  // namespace
}  // namespace settle
