#pragma once

#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "eventually.h"
#include "participant_server.h"
#include "settle/sdk/client.h"
#include "settled_process.h"
#include "temp_dir.h"

// Shared by the SDK's client, TCC and saga tests.
namespace settle::sdk::test {

inline constexpr const char* kOutBody = R"({"amount":30,"from":"alice"})";
inline constexpr const char* kInBody = R"({"amount": 30, "to": "bob"})";

inline std::unique_ptr<Client> MakeClient(const std::string& server, ClientOptions options = {}) {
  auto client = Client::Create(server, std::move(options));
  REQUIRE(client.ok());
  return std::move(client).value();
}

// The real coordinator on a fresh database, and a client for it. Tests declare their
// participants before it: a participant server stops quickly only once the keep-alive
// connections to it (from settled and from the client) are closed.
struct RealCoordinator {
  settle::testing::TempDir dir;
  settle::testing::SettledProcess settled{dir.File("settle.db")};
  std::unique_ptr<Client> client = MakeClient(Url());

  std::string Url(const std::string& prefix = "/api/settle") const {
    return "http://127.0.0.1:" + std::to_string(settled.port()) + prefix;
  }
};

// Polls /query until the transaction has `status` (the coordinator records a branch's answer
// just after receiving it); the last state seen otherwise.
inline std::optional<TransactionInfo> WaitForStatus(Client& client, const std::string& gid,
                                                    GlobalStatus status) {
  std::optional<TransactionInfo> last;
  settle::testing::Eventually(
      [&] {
        auto tx = client.Query(gid);
        if (!tx.ok() || !tx->has_value()) return false;
        last = **tx;
        return last->status == status;
      },
      std::chrono::seconds(10), std::chrono::milliseconds(10));
  return last;
}

// Checks a branch call as docs/protocol.md §4.1 says it is made.
inline void CheckBranchCall(const settle::testing::ReceivedCall& call, const std::string& gid,
                            TransType trans_type, const std::string& branch_id,
                            const std::string& op, const std::string& body) {
  CHECK(call.method == "POST");
  CHECK(call.query.at("gid") == gid);
  CHECK(call.query.at("trans_type") == ToString(trans_type));
  CHECK(call.query.at("branch_id") == branch_id);
  CHECK(call.query.at("op") == op);
  CHECK(call.body == body);
  CHECK(call.headers.at("Content-Type") == "application/json");
}

}  // namespace settle::sdk::test
