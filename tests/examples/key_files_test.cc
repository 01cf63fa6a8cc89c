// Key files at the start of the real binaries (docs/protocol.md §4.9): settled's --signing-key
// and the examples' --coordinator-key read an Ed25519 key in PEM or a secret declared
// "hmac:...", refuse anything else naming the flag and the file (exit 2, before they serve or
// create anything), and say at start which algorithm and keyid they sign or verify with.
#include <sys/wait.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "child_process.h"
#include "eventually.h"
#include "example_process.h"
#include "file_text.h"
#include "json_client.h"
#include "key_files.h"
#include "settle/signing/keys.h"
#include "settled_process.h"
#include "temp_dir.h"

namespace settle {
namespace {

using testing::ChildProcess;
using testing::JsonClient;
using testing::RefusedKeyFile;
using testing::SettledProcess;
using testing::TempDir;

constexpr auto kWait = std::chrono::seconds(20);

// How a process that was refused its key ended: its exit code, or -1 if it did not exit.
int ExitCode(ChildProcess& process) {
  const int status = process.Wait(kWait);
  return status >= 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// No part of `material` (12 characters or more of it) is in `text`.
bool Quotes(const std::string& text, const std::string& material) {
  constexpr std::size_t kWindow = 12;
  for (std::size_t i = 0; i + kWindow <= material.size(); ++i) {
    if (text.find(material.substr(i, kWindow)) != std::string::npos) return true;
  }
  return false;
}

// Runs `argv`, which must be refused `file` under `flag`: exit 2, nothing served, standard
// error naming the flag, the file and why, never quoting the file's material.
void ExpectRefused(const std::vector<std::string>& argv, const std::string& flag,
                   const RefusedKeyFile& file, const std::string& stderr_path) {
  ChildProcess process(argv, stderr_path);
  CHECK(ExitCode(process) == 2);
  CHECK(process.WaitForLine("listening on", std::chrono::milliseconds(1)).empty());
  const std::string err = testing::ReadFile(stderr_path);
  CHECK_THAT(err, Catch::Contains(flag + ": " + file.path + ": " + file.because) &&
                      Catch::Contains("; expected an Ed25519 "));
  CHECK_FALSE(Quotes(err, file.material));
}

TEST_CASE("settled --signing-key refuses a key file that is not PEM or declared hmac:, naming it",
          "[keys][process]") {
  TempDir dir;
  const std::vector<RefusedKeyFile> refused = testing::WriteRefusedKeyFiles(dir.path().string());
  int n = 0;
  for (const RefusedKeyFile& file : refused) {
    INFO(file.form);
    const std::string db = dir.File("settle-" + std::to_string(++n) + ".db");
    ExpectRefused({SettledProcess::BinaryPath(), "--host", "127.0.0.1", "--port", "0",
                   "--grpc-port", "0", "--store", db, "--signing-key", file.path},
                  "--signing-key", file, dir.File("settled.err"));
    CHECK_FALSE(std::filesystem::exists(db));  // it stopped before opening its store
  }
}

TEST_CASE("bank-participant and order-service --coordinator-key refuse the same, naming the file",
          "[keys][process]") {
  TempDir dir;
  const std::vector<RefusedKeyFile> refused = testing::WriteRefusedKeyFiles(dir.path().string());
  int n = 0;
  for (const RefusedKeyFile& file : refused) {
    if (file.refused_to_signer_only) continue;  // a public key is what a verifier holds
    INFO(file.form);
    const std::string db = dir.File("bank-" + std::to_string(++n) + ".db");
    // A good key beside it does not make up for it.
    const std::string good = testing::WriteHmacKeyFile(dir.path().string(), "good.key");
    ExpectRefused({BANK_BINARY, "--port", "0", "--db", db, "--coordinator-key", good,
                   "--coordinator-key", file.path},
                  "--coordinator-key", file, dir.File("bank.err"));
    CHECK_FALSE(std::filesystem::exists(db));
    ExpectRefused(
        {ORDER_SERVICE_BINARY, "--port", "0", "--db", dir.File("orders.db"), "--coordinator",
         "http://127.0.0.1:9/api/settle", "--coordinator-key", file.path},
        "--coordinator-key", file, dir.File("orders.err"));
  }
}

TEST_CASE("settled and bank-participant log the algorithm and keyid of the keys they load",
          "[keys][process]") {
  TempDir dir;
  const testing::Ed25519KeyFiles pair = testing::WriteEd25519KeyFiles(dir.path().string(), "ed");
  const std::string secret = testing::WriteHmacKeyFile(dir.path().string(), "secret.key");
  // The keyids as the library computes them.
  auto ed_signer = signing::SigningKey::FromFile(pair.private_key);
  auto ed_verifier = signing::VerifyingKey::FromFile(pair.public_key);
  auto hmac = signing::VerifyingKey::FromFile(secret);
  REQUIRE(ed_signer);
  REQUIRE(ed_verifier);
  REQUIRE(hmac);
  REQUIRE(ed_verifier->keyid() == ed_signer->keyid());

  SECTION("settled, signing with an Ed25519 key, with a shared secret, or not at all") {
    const std::vector<std::pair<std::vector<std::string>, std::string>> starts = {
        {{"--signing-key", pair.private_key},
         "signing branch calls with ed25519 key " + ed_signer->keyid() + " (--signing-key " +
             pair.private_key + ")"},
        {{"--signing-key", secret},
         "signing branch calls with hmac-sha256 key " + hmac->keyid() + " (--signing-key " +
             secret + ")"},
        {{}, "not signing branch calls"}};
    int n = 0;
    for (const auto& [args, line] : starts) {
      INFO(line);
      const std::string log = dir.File("settled-" + std::to_string(++n) + ".log");
      SettledProcess settled(dir.File("settle-" + std::to_string(n) + ".db"), args, 0, log);
      CHECK(testing::WaitForFileToContain(log, line, std::chrono::steady_clock::now() + kWait));
      CHECK_FALSE(Quotes(testing::ReadFile(log), testing::ReadFile(secret).substr(5)));
    }
  }
  SECTION("bank-participant, verifying with two keys at once, over HTTP and gRPC") {
    const std::string keys = "ed25519 " + ed_verifier->keyid() + ", hmac-sha256 " + hmac->keyid();
    ChildProcess bank({BANK_BINARY, "--port", "0", "--grpc-port", "0", "--db", dir.File("bank.db"),
                       "--coordinator-key", pair.public_key, "--coordinator-key", secret},
                      dir.File("bank.err"));
    REQUIRE(testing::ListeningPort(bank) > 0);
    CHECK_FALSE(bank.WaitForLine("bank-participant runs the branch calls settled signed with " +
                                     keys + " (--coordinator-key " + pair.public_key + " " +
                                     secret + ")",
                                 kWait)
                    .empty());
    REQUIRE_FALSE(bank.WaitForLine("gRPC branches on", kWait).empty());
    const std::string err = testing::ReadFile(dir.File("bank.err"));
    CHECK_THAT(
        err,
        Catch::Contains("settle participant: verifying signed calls with " + keys + "\n") &&
            Catch::Contains("settle grpc participant: verifying signed calls with " + keys + "\n"));
    CHECK_FALSE(Quotes(err, testing::ReadFile(secret).substr(5)));
  }
}

long long Balance(int port, const std::string& account) {
  JsonClient client(port);
  const auto r = client.Get("/api/accounts/" + account);
  return r.status == 200 ? r.json["balance"].get<long long>() : -1;
}

TEST_CASE("a shared secret declared hmac: signs settled's calls that a bank holding it runs",
          "[keys][process]") {
  TempDir dir;
  const std::string secret = testing::WriteHmacKeyFile(dir.path().string(), "secret.key");
  SettledProcess settled(dir.File("settle.db"), {"--signing-key", secret});
  ChildProcess bank({BANK_BINARY, "--port", "0", "--db", dir.File("bank.db"), "--accounts", "2",
                     "--initial-balance", "100", "--coordinator-key", secret},
                    dir.File("bank.err"));
  const int port = testing::ListeningPort(bank);
  REQUIRE(port > 0);
  const std::string bank_url = "http://127.0.0.1:" + std::to_string(port);

  // Anyone else's call moves nothing.
  JsonClient forger(port);
  CHECK(forger
            .Post("/api/TransIn?gid=forged-1&trans_type=saga&branch_id=01&op=action",
                  R"({"account_id":"1","amount":1000})")
            .status == 401);
  CHECK(Balance(port, "1") == 100);

  ChildProcess transfer(
      {TRANSFER_BINARY, "--coordinator", "http://127.0.0.1:" + std::to_string(settled.port()),
       "--from-bank", bank_url, "--to-bank", bank_url, "--from", "1", "--to", "2", "--amount", "30",
       "--mode", "saga"},
      dir.File("transfer.err"));
  CHECK_FALSE(transfer.WaitForLine("status succeed", kWait).empty());
  CHECK(ExitCode(transfer) == 0);
  CHECK(Balance(port, "1") == 70);
  CHECK(Balance(port, "2") == 130);
}

// A workflow's service makes its steps' calls itself (Confirms too): a bank given the
// service's key with --workflow-key runs them signed by that key (bank-workflow --signing-key),
// and refuses them unsigned.
TEST_CASE("bank-workflow --signing-key signs the steps a bank with --workflow-key runs",
          "[keys][process][workflow]") {
  TempDir dir;
  const std::string settled_secret = testing::WriteHmacKeyFile(dir.path().string(), "settled.key");
  const std::string service_secret = testing::WriteHmacKeyFile(dir.path().string(), "service.key");
  SettledProcess settled(dir.File("settle.db"), {"--signing-key", settled_secret});
  const std::string coordinator = "http://127.0.0.1:" + std::to_string(settled.port());

  // --workflow-key without signed calls is refused before anything is served.
  ChildProcess lonely(
      {BANK_BINARY, "--port", "0", "--db", dir.File("lonely.db"), "--workflow-key", service_secret},
      dir.File("lonely.err"));
  CHECK(ExitCode(lonely) == 2);
  CHECK_THAT(testing::ReadFile(dir.File("lonely.err")),
             Catch::Contains("--workflow-key: takes --coordinator-key"));

  ChildProcess bank({BANK_BINARY, "--port", "0", "--db", dir.File("bank.db"), "--accounts", "2",
                     "--initial-balance", "100", "--coordinator-key", settled_secret,
                     "--workflow-key", service_secret},
                    dir.File("bank.err"));
  const int port = testing::ListeningPort(bank);
  REQUIRE(port > 0);
  CHECK_THAT(testing::ReadFile(dir.File("bank.err")),
             Catch::Contains("; workflow steps: hmac-sha256"));
  const std::string bank_url = "http://127.0.0.1:" + std::to_string(port);
  const std::string input = R"({"from_bank":")" + bank_url + R"(","from":"1","to_bank":")" +
                            bank_url + R"(","to":"2","amount":30})";

  // Unsigned: its first Try is refused, the run stops, nothing moves.
  const int unsigned_port = testing::UnusedPort();
  ChildProcess unsigned_service(
      {BANK_WORKFLOW_BINARY, "--coordinator", coordinator, "--port", std::to_string(unsigned_port)},
      dir.File("unsigned.err"));
  REQUIRE_FALSE(unsigned_service.WaitForLine("listening on", kWait).empty());
  CHECK(JsonClient(unsigned_port).Post("/api/transfers?gid=wf-unsigned", input).status == 503);
  CHECK(Balance(port, "1") == 100);

  const int signed_port = testing::UnusedPort();
  ChildProcess service({BANK_WORKFLOW_BINARY, "--coordinator", coordinator, "--port",
                        std::to_string(signed_port), "--signing-key", service_secret},
                       dir.File("service.err"));
  REQUIRE_FALSE(service.WaitForLine("listening on", kWait).empty());
  const auto moved = JsonClient(signed_port).Post("/api/transfers?gid=wf-signed", input);
  CHECK(moved.status == 200);
  CHECK(Balance(port, "1") == 70);
  CHECK(Balance(port, "2") == 130);
}

}  // namespace
}  // namespace settle
