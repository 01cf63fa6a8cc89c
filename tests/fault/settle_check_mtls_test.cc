// settle-check against participants that require client certificates (mutual TLS): with
// --tls-client-cert and --tls-client-key from the participant's client CA it runs every check
// over https:// and grpcs://; without a certificate the participant ends the TLS handshake, and
// settle-check reports it unreachable (exit status 2), saying that the participant may require
// one. A throwaway CA is made with openssl; the participant is served in the test's process.
#include <sqlite3.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "grpc_participant_client.h"
#include "settle/sdk/barrier.h"
#include "settle/sdk/grpc_branch_server.h"
#include "settle/sdk/participant.h"
#include "settle/sdk/sqlite_barrier_store.h"
#include "settle_check_run.h"
#include "temp_dir.h"
#include "test_ca.h"

namespace {

using settle::testing::CheckRun;
using settle::testing::RunSettleCheck;
using settle::testing::TempDir;
using settle::testing::TestCa;
namespace sdk = settle::sdk;

const std::string kBody = R"({"amount":1})";

const std::vector<std::string> kTccChecks = {"empty rollback",   "hanging try",
                                             "duplicate try",    "duplicate confirm",
                                             "cancel after try", "duplicate cancel"};

// One account behind the barrier, in one SQLite file, whose TCC branch TransOut moves --body's
// amount from balance to frozen (try), out of frozen (confirm) or back (cancel). It is served
// over HTTPS (/api/TransOutTry..., and its state at /api/account) and as the gRPC methods
// /bank.Bank/TransOutTry... over TLS, both requiring a client certificate from `clients`.
class MtlsBank {
 public:
  MtlsBank(const TempDir& dir, const TestCa& ca, const TestCa& clients)
      : server_cert_(ca.IssueForLocalhost()),
        https_(sdk::ParticipantOptions{.threads = 2,
                                       .io_threads = 1,
                                       .tls_cert_file = server_cert_.cert_file,
                                       .tls_key_file = server_cert_.key_file,
                                       .tls_client_ca_file = clients.ca_file()}),
        grpcs_(sdk::GrpcBranchServerOptions{.threads = 2,
                                            .tls_cert_file = server_cert_.cert_file,
                                            .tls_key_file = server_cert_.key_file,
                                            .tls_client_ca_file = clients.ca_file()}) {
    auto store = sdk::SqliteBarrierStore::Open(dir.File("bank.db"));
    REQUIRE(store);
    store_ = std::move(*store);
    barrier_ = std::make_unique<sdk::Barrier>(*store_, clock_);
    auto tx = store_->Begin();
    REQUIRE(tx);
    REQUIRE(sqlite3_exec(sdk::SqliteBarrierStore::Connection(**tx),
                         "CREATE TABLE account (balance INTEGER NOT NULL, frozen INTEGER NOT NULL);"
                         "INSERT INTO account VALUES (100, 0)",
                         nullptr, nullptr, nullptr) == SQLITE_OK);
    REQUIRE((*tx)->Commit().ok());

    https_.OnTry("/api/TransOutTry", Move(-1, +1))
        .OnConfirm("/api/TransOutConfirm", Move(0, -1))
        .OnCancel("/api/TransOutCancel", Move(+1, -1))
        .OnGet("/api/account", [this](const sdk::HttpRequest&) {
          return sdk::HttpReply{.body = R"({"balance":)" + std::to_string(Read("balance")) +
                                        R"(,"frozen":)" + std::to_string(Read("frozen")) + "}"};
        });
    grpcs_.OnTry("/bank.Bank/TransOutTry", Move(-1, +1))
        .OnConfirm("/bank.Bank/TransOutConfirm", Move(0, -1))
        .OnCancel("/bank.Bank/TransOutCancel", Move(+1, -1));
    auto https_port = https_.Start("127.0.0.1", 0);
    REQUIRE(https_port);
    https_port_ = *https_port;
    auto grpcs_port = grpcs_.Start("127.0.0.1", 0);
    REQUIRE(grpcs_port);
    grpcs_port_ = *grpcs_port;
  }

  std::string Api() const { return "https://127.0.0.1:" + std::to_string(https_port_) + "/api"; }
  std::string State() const { return Api() + "/account"; }
  // The host dialed is the name on the server's certificate.
  std::string GrpcService() const {
    return "grpcs://localhost:" + std::to_string(grpcs_port_) + "/bank.Bank";
  }
  std::int64_t BarrierRows() { return Read("(SELECT COUNT(*) FROM barrier)"); }
  std::int64_t Balance() { return Read("balance"); }

 private:
  sdk::BranchHandler Move(int balance, int frozen) {
    return sdk::Guarded(*barrier_, [balance, frozen](const sdk::BranchRequest&,
                                                     sdk::BarrierTransaction& tx) {
      const std::string sql = "UPDATE account SET balance = balance + " + std::to_string(balance) +
                              ", frozen = frozen + " + std::to_string(frozen);
      if (sqlite3_exec(sdk::SqliteBarrierStore::Connection(tx), sql.c_str(), nullptr, nullptr,
                       nullptr) != SQLITE_OK) {
        return settle::Status::Unavailable("update failed");
      }
      return settle::Status::Ok();
    });
  }
  std::int64_t Read(const std::string& column) {
    auto tx = store_->Begin();
    REQUIRE(tx);
    sqlite3_stmt* stmt = nullptr;
    const std::string sql = "SELECT " + column + " FROM account";
    REQUIRE(sqlite3_prepare_v2(sdk::SqliteBarrierStore::Connection(**tx), sql.c_str(), -1, &stmt,
                               nullptr) == SQLITE_OK);
    std::int64_t value = -1;
    if (sqlite3_step(stmt) == SQLITE_ROW) value = sqlite3_column_int64(stmt, 0);
    sqlite3_finalize(stmt);
    return value;
  }

  TestCa::Issued server_cert_;
  settle::SystemClock clock_;
  std::unique_ptr<sdk::SqliteBarrierStore> store_;
  std::unique_ptr<sdk::Barrier> barrier_;
  sdk::Participant https_;  // after the barrier: they stop serving before it goes away
  sdk::GrpcBranchServer grpcs_;
  int https_port_ = 0;
  int grpcs_port_ = 0;
};

// The CAs of a run: one that issues the bank's server certificate (what --ca-file trusts) and
// one that issues the client certificates the bank accepts.
struct Cas {
  TempDir dir;
  TestCa ca{dir.path()};
  TestCa clients{dir.path(), "clients"};
  TestCa::Issued settle_check = clients.IssueClient("settle-check", "/O=Shop/CN=settle-check");
};

// settle-check's arguments for the bank's TransOut at `participant`, presenting `cert` unless
// it is empty.
std::vector<std::string> Args(const Cas& cas, const std::string& participant,
                              const TestCa::Issued& cert) {
  std::vector<std::string> args = {"--participant", participant, "--tcc",     "TransOut",
                                   "--body",        kBody,       "--ca-file", cas.ca.ca_file()};
  if (!cert.cert_file.empty()) {
    args.insert(args.end(),
                {"--tls-client-cert", cert.cert_file, "--tls-client-key", cert.key_file});
  }
  return args;
}

void CheckEveryTccCheckPassed(const CheckRun& run) {
  INFO(run.out << run.err);
  CHECK(run.exit_code == 0);
  for (const std::string& check : kTccChecks) {
    INFO(check);
    CHECK(run.Verdict(check) == "PASS");
  }
  CHECK(run.out.find("6 checks, 6 passed, 0 failed, 0 unverified") != std::string::npos);
}

// Unreachable, exit status 2, the handshake named as what failed and the flags that would help;
// no check ran.
void CheckRefusedAtTheHandshake(const CheckRun& run) {
  INFO(run.out << run.err);
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("cannot reach the participant") != std::string::npos);
  CHECK(run.err.find("TLS handshake with ") != std::string::npos);
  CHECK(run.err.find("(the participant may require a client certificate: give one with "
                     "--tls-client-cert and --tls-client-key)") != std::string::npos);
  CHECK(run.out.find("PASS") == std::string::npos);
  CHECK(run.out.find("FAIL") == std::string::npos);
}

}  // namespace

TEST_CASE(
    "settle-check with --tls-client-cert passes every check of an https:// participant that "
    "requires client certificates, and without one reports it unreachable at the handshake",
    "[fault][settle-check][mtls]") {
  Cas cas;
  MtlsBank bank(cas.dir, cas.ca, cas.clients);

  std::vector<std::string> args = Args(cas, bank.Api(), cas.settle_check);
  args.insert(args.end(), {"--state", bank.State()});
  CheckEveryTccCheckPassed(RunSettleCheck(args));
  const std::int64_t rows = bank.BarrierRows();
  CHECK(rows > 0);
  CHECK(bank.Balance() == 99);  // the one the duplicate confirm check spent

  CheckRefusedAtTheHandshake(RunSettleCheck(Args(cas, bank.Api(), {})));
  CHECK(bank.BarrierRows() == rows);  // nothing reached the barrier

  // The state URL is the participant's too: it is read with the same certificate, or not at all.
  std::vector<std::string> state_only = Args(cas, bank.Api(), {});
  state_only.insert(state_only.end(), {"--state", bank.State()});
  const CheckRun state = RunSettleCheck(state_only);
  INFO(state.out << state.err);
  CHECK(state.exit_code == 2);
  CHECK(state.err.find("--state " + bank.State() + ": no answer (TLS handshake with ") !=
        std::string::npos);
  CHECK(state.err.find("may require a client certificate") != std::string::npos);
}

TEST_CASE(
    "settle-check with --tls-client-cert passes every check of a grpcs:// participant that "
    "requires client certificates, and without one reports it unreachable at the handshake",
    "[fault][settle-check][mtls][grpc]") {
  Cas cas;
  MtlsBank bank(cas.dir, cas.ca, cas.clients);

  std::vector<std::string> args = Args(cas, bank.GrpcService(), cas.settle_check);
  args.insert(args.end(), {"--state", bank.State()});
  CheckEveryTccCheckPassed(RunSettleCheck(args));
  const std::int64_t rows = bank.BarrierRows();
  CHECK(rows > 0);

  CheckRefusedAtTheHandshake(RunSettleCheck(Args(cas, bank.GrpcService(), {})));
  CHECK(bank.BarrierRows() == rows);
}

TEST_CASE(
    "settle-check says when a participant does not accept its client certificate, another "
    "CA's or an expired one",
    "[fault][settle-check][mtls]") {
  Cas cas;
  MtlsBank bank(cas.dir, cas.ca, cas.clients);
  TestCa stranger(cas.dir.path(), "stranger");
  const TestCa::Issued foreign = stranger.IssueClient("foreign", "/O=Shop/CN=settle-check");
  const TestCa::Issued expired = cas.clients.IssueExpiredClient("old", "/O=Shop/CN=settle-check");

  for (const std::string& participant : {bank.Api(), bank.GrpcService()}) {
    for (const TestCa::Issued& cert : {foreign, expired}) {
      const CheckRun run = RunSettleCheck(Args(cas, participant, cert));
      INFO(participant << " " << cert.cert_file << "\n" << run.out << run.err);
      CHECK(run.exit_code == 2);
      CHECK(run.err.find("cannot reach the participant") != std::string::npos);
      CHECK(run.err.find("TLS handshake with ") != std::string::npos);
      CHECK(run.err.find("(the participant may not accept the client certificate " +
                         cert.cert_file + ": another CA's, or expired)") != std::string::npos);
    }
  }
  CHECK(bank.BarrierRows() == 0);
}

TEST_CASE("settle-check's client certificate needs its key, and one that goes with it",
          "[fault][settle-check][mtls]") {
  Cas cas;
  const TestCa::Issued other = cas.clients.IssueClient("other", "/O=Shop/CN=other");
  const std::string api = "https://127.0.0.1:9/api";
  const std::string cert = cas.settle_check.cert_file;
  const std::string key = cas.settle_check.key_file;
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--tls-client-cert", cert}, "--tls-client-cert: needs --tls-client-key FILE"},
      {{"--tls-client-key", key}, "--tls-client-key: needs --tls-client-cert FILE"},
      {{"--tls-client-cert", cert, "--tls-client-key", other.key_file},
       "--tls-client-cert/--tls-client-key: TLS key '" + other.key_file + "'"},
      {{"--tls-client-cert", key, "--tls-client-key", key}, "--tls-client-cert/--tls-client-key"},
      {{"--tls-client-cert", "/nonexistent/cert.pem", "--tls-client-key", key},
       "--tls-client-cert"},
  };
  for (const auto& [flags, message] : cases) {
    std::vector<std::string> args = {"--participant", api, "--tcc", "TransOut", "--body", kBody};
    args.insert(args.end(), flags.begin(), flags.end());
    const CheckRun run = RunSettleCheck(args);
    INFO(run.out << run.err);
    CHECK(run.exit_code == 2);
    CHECK(run.err.find(message) != std::string::npos);
    CHECK(run.out.empty());
  }
}

namespace {

using settle::checker::ReadUnavailable;
using settle::checker::Unavailable;

// In TLS 1.3 a server that refuses the client's certificate closes a connection the client
// already took for READY: the message, not the channel's state, says it ended at the handshake.
TEST_CASE("an UNAVAILABLE from a grpcs:// participant that closed at the handshake is no answer",
          "[fault][settle-check][mtls][grpc]") {
  for (const bool ready : {false, true}) {
    INFO("channel READY: " << ready);
    CHECK(ReadUnavailable(true, ready, "Socket closed") == Unavailable::kHandshakeFailed);
    CHECK(ReadUnavailable(true, ready, "Handshake failed") == Unavailable::kHandshakeFailed);
  }
  CHECK(ReadUnavailable(true, false, "failed to connect to all addresses") ==
        Unavailable::kUnreachable);
  CHECK(ReadUnavailable(false, false, "Socket closed") == Unavailable::kUnreachable);
  // The method's own UNAVAILABLE, on a channel that connected.
  CHECK(ReadUnavailable(true, true, "database down") == Unavailable::kAnswer);
  CHECK(ReadUnavailable(false, true, "Socket closed") == Unavailable::kAnswer);
}

}  // namespace
