// A gRPC participant behind a coordinator that sends a transaction's dtm-* branch headers ahead
// of its own metadata (one older than settled's check) gets each dtm-* key twice; the SDK's
// GrpcBranchServer refuses such a call with INVALID_ARGUMENT, before its signature, the barrier or
// a handler (docs/protocol.md §10.4), never ABORTED, which would read as FAILURE.
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <sqlite3.h>

#include <catch2/catch.hpp>

#include <atomic>
#include <future>
#include <string>

#include "../common/signing/rfc9421_keys.h"
#include "settle/sdk/grpc_branch_server.h"
#include "settle/sdk/sqlite_barrier_store.h"
#include "temp_dir.h"

namespace settle::sdk {
namespace {

using Metadata = std::vector<std::pair<std::string, std::string>>;

// Calls `method` of 127.0.0.1:port with `metadata` in this order, as a coordinator does.
grpc::Status Call(int port, const std::string& method, const Metadata& metadata) {
  auto channel =
      grpc::CreateChannel("127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  for (const auto& [k, v] : metadata) ctx.AddMetadata(k, v);
  grpc::Slice slice(std::string(R"({"account_id":"2","amount":10})"));
  grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  std::promise<grpc::Status> done;
  stub.UnaryCall(&ctx, method, grpc::StubOptions(), &request, &response,
                 [&done](grpc::Status s) { done.set_value(std::move(s)); });
  return done.get_future().get();
}

// The client's branch_headers first, then the coordinator's own words.
Metadata Attack(const std::string& key, const std::string& value) {
  return {{key, value},
          {"dtm-gid", "evil-1"},
          {"dtm-trans_type", "saga"},
          {"dtm-branch_id", "01"},
          {"dtm-op", "action"},
          {"dtm-dtm", ""}};
}

std::int64_t BarrierRows(SqliteBarrierStore& store) {
  auto tx = store.Begin();
  REQUIRE(tx);
  sqlite3_stmt* stmt = nullptr;
  REQUIRE(sqlite3_prepare_v2(SqliteBarrierStore::Connection(**tx), "SELECT COUNT(*) FROM barrier",
                             -1, &stmt, nullptr) == SQLITE_OK);
  std::int64_t rows = -1;
  if (sqlite3_step(stmt) == SQLITE_ROW) rows = sqlite3_column_int64(stmt, 0);
  sqlite3_finalize(stmt);
  return rows;
}

TEST_CASE("a gRPC call whose dtm-* metadata arrives twice is INVALID_ARGUMENT naming the key",
          "[sdk][grpc][protocol_keys]") {
  testing::TempDir dir;
  auto store = SqliteBarrierStore::Open(dir.File("barrier.db"));
  REQUIRE(store);
  SystemClock clock;
  Barrier barrier(**store, clock);
  std::atomic<int> ran{0};
  GrpcBranchServer server;
  server.OnBranch("/bank.Bank/TransIn",
                  Guarded(barrier, [&](const BranchRequest&, BarrierTransaction&) {
                    ++ran;
                    return Status::Ok();
                  }));
  server.OnQueryPrepared("/bank.Bank/QueryPrepared", barrier);
  auto port = server.Start("127.0.0.1", 0);
  REQUIRE(port);

  for (const auto& [key, value] : Metadata{{"dtm-gid", "VICTIM"},
                                           {"dtm-op", "compensate"},
                                           {"dtm-trans_type", "tcc"},
                                           {"dtm-branch_id", "02"},
                                           {"dtm-dtm", "evil:36790"}}) {
    INFO(key);
    const grpc::Status s = Call(*port, "/bank.Bank/TransIn", Attack(key, value));
    CHECK(s.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
    CHECK(s.error_message() == key +
                                   ": more than once in the call's metadata; the coordinator "
                                   "sets it, and a transaction's branch_headers may not name it");
  }
  Metadata phase2 = Attack("dtm-phase2_url", "http://evil/");
  phase2.emplace_back("dtm-phase2_url", "http://bank/");
  CHECK(Call(*port, "/bank.Bank/TransIn", phase2).error_code() ==
        grpc::StatusCode::INVALID_ARGUMENT);
  // A back-check would write the victim's "rollback" row.
  Metadata check = Attack("dtm-gid", "VICTIM");
  check[4].second = "msg";
  CHECK(Call(*port, "/bank.Bank/QueryPrepared", check).error_code() ==
        grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(ran == 0);
  CHECK(BarrierRows(**store) == 0);

  // Each key once: the handler runs (the refusals were the repeats').
  Metadata once(Attack("x-tenant", "acme"));
  CHECK(Call(*port, "/bank.Bank/TransIn", once).ok());
  CHECK(ran == 1);
  CHECK(BarrierRows(**store) == 1);
}

TEST_CASE("a repeated dtm-* key is refused before the signature is checked",
          "[sdk][grpc][protocol_keys]") {
  auto verifying = signing::VerifyingKey::FromText(signing::testing::kRfcEd25519Public);
  REQUIRE(verifying);
  GrpcBranchServerOptions options;
  options.signed_calls.emplace();
  options.signed_calls->keys.push_back(*verifying);
  std::atomic<int> ran{0};
  GrpcBranchServer server(options);
  server.OnBranch("/bank.Bank/TransIn", [&](const BranchRequest&) {
    ++ran;
    return BranchReply::Success();
  });
  auto port = server.Start("127.0.0.1", 0);
  REQUIRE(port);
  CHECK(Call(*port, "/bank.Bank/TransIn", Attack("dtm-gid", "VICTIM")).error_code() ==
        grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(server.signature_refusals() == 0);
  CHECK(Call(*port, "/bank.Bank/TransIn", Attack("x-tenant", "acme")).error_code() ==
        grpc::StatusCode::UNAUTHENTICATED);
  CHECK(ran == 0);
}

}  // namespace
}  // namespace settle::sdk
