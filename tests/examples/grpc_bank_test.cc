// The bank example serving its branches over gRPC (bank-participant --grpc-port): a saga moves
// money from an HTTP bank to a gRPC bank through the real settled, and carries on exactly once
// when the gRPC bank and settled are killed with SIGKILL mid-transaction. Real processes, real
// sockets on 127.0.0.1, real database files.
#include <signal.h>

#include <catch2/catch.hpp>

#include <regex>
#include <string>

#include "child_process.h"
#include "eventually.h"
#include "example_process.h"
#include "json_client.h"
#include "settled_process.h"
#include "temp_dir.h"

namespace settle {
namespace {

using testing::ChildProcess;
using testing::JsonClient;
using testing::SettledProcess;
using testing::TempDir;

constexpr auto kWait = std::chrono::seconds(20);

// A bank-participant process; `grpc_port` -1: HTTP only, 0: gRPC on any free port.
struct Bank {
  Bank(TempDir& dir, const std::string& name, int grpc_port) {
    std::vector<std::string> argv = {
        BANK_BINARY,         "--port", "0", "--db", dir.File(name + ".db"), "--accounts", "2",
        "--initial-balance", "100"};
    if (grpc_port >= 0) argv.insert(argv.end(), {"--grpc-port", std::to_string(grpc_port)});
    process = std::make_unique<ChildProcess>(argv, dir.File(name + ".log"));
    http_port = testing::ListeningPort(*process);
    if (grpc_port >= 0) {
      const std::string line = process->WaitForLine("gRPC branches on", kWait);
      const std::size_t colon = line.rfind(':');
      if (colon != std::string::npos) this->grpc_port = std::stoi(line.substr(colon + 1));
    }
  }
  long long Balance(const std::string& account) {
    JsonClient client(http_port);
    const auto r = client.Get("/api/accounts/" + account);
    return r.status == 200 ? r.json["balance"].get<long long>() : -1;
  }
  std::unique_ptr<ChildProcess> process;
  int http_port = 0;
  int grpc_port = 0;
};

// Runs the transfer example: a saga of 30 from account 1 at `from` to account 2 at `to`.
std::unique_ptr<ChildProcess> Transfer(TempDir& dir, int settled_port, const std::string& from,
                                       const std::string& to) {
  return std::make_unique<ChildProcess>(
      std::vector<std::string>{TRANSFER_BINARY, "--coordinator",
                               "http://127.0.0.1:" + std::to_string(settled_port), "--from-bank",
                               from, "--to-bank", to, "--from", "1", "--to", "2", "--amount", "30",
                               "--mode", "saga"},
      dir.File("transfer.log"));
}

std::string StatusOf(int settled_port, const std::string& gid) {
  JsonClient client(settled_port);
  const auto q = client.Get("/api/settle/query?gid=" + gid).json;
  if (!q.is_object() || !q["transaction"].is_object()) return "";
  return q["transaction"]["status"].get<std::string>();
}

TEST_CASE("a saga moves money from an HTTP bank to a gRPC bank", "[grpc][bank][process]") {
  TempDir dir;
  SettledProcess settled(dir.File("settle.db"));
  Bank http_bank(dir, "http-bank", -1);
  Bank grpc_bank(dir, "grpc-bank", 0);
  REQUIRE(http_bank.http_port > 0);
  REQUIRE(grpc_bank.grpc_port > 0);
  auto transfer =
      Transfer(dir, settled.port(), "http://127.0.0.1:" + std::to_string(http_bank.http_port),
               "127.0.0.1:" + std::to_string(grpc_bank.grpc_port));
  CHECK_FALSE(transfer->WaitForLine("status succeed", kWait).empty());
  CHECK(transfer->Wait(kWait) == 0);
  CHECK(http_bank.Balance("1") == 70);
  CHECK(grpc_bank.Balance("2") == 130);
}

TEST_CASE("the gRPC bank and settled killed with SIGKILL mid-saga: the money moves exactly once",
          "[grpc][bank][process][crash]") {
  TempDir dir;
  auto settled = std::make_unique<SettledProcess>(
      dir.File("settle.db"), std::vector<std::string>{"--retry-interval", "100ms"});
  Bank http_bank(dir, "http-bank", -1);
  auto grpc_bank = std::make_unique<Bank>(dir, "grpc-bank", 0);
  const int grpc_port = grpc_bank->grpc_port;
  REQUIRE(grpc_port > 0);
  // The receiving bank dies before the saga reaches it: its credit is retried.
  grpc_bank->process->Signal(SIGKILL);
  grpc_bank->process->Wait(kWait);
  auto transfer =
      Transfer(dir, settled->port(), "http://127.0.0.1:" + std::to_string(http_bank.http_port),
               "127.0.0.1:" + std::to_string(grpc_port));
  const std::string gid_line = transfer->WaitForLine("gid ", kWait);
  REQUIRE_FALSE(gid_line.empty());
  const std::string gid = gid_line.substr(4);
  REQUIRE(testing::Eventually([&] { return http_bank.Balance("1") == 70; }, kWait));
  transfer->Wait(std::chrono::seconds(40));  // it gives up waiting: the saga is unfinished
  CHECK(StatusOf(settled->port(), gid) == "submitted");

  // settled dies too, then both come back: the gRPC bank on the same port.
  settled->Kill();
  settled = std::make_unique<SettledProcess>(dir.File("settle.db"),
                                             std::vector<std::string>{"--retry-interval", "100ms"});
  grpc_bank = std::make_unique<Bank>(dir, "grpc-bank", grpc_port);
  REQUIRE(grpc_bank->grpc_port == grpc_port);
  REQUIRE(testing::Eventually([&] { return StatusOf(settled->port(), gid) == "succeed"; },
                              std::chrono::seconds(30)));
  CHECK(http_bank.Balance("1") == 70);
  CHECK(grpc_bank->Balance("2") == 130);  // credited once, whatever was retried
}

}  // namespace
}  // namespace settle
