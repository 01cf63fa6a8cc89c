// settle-check, run as a user runs it: against the real bank example (every check passes),
// against participants with deliberate barrier bugs (exactly the checks that catch them fail),
// against an unreachable one, and with bad arguments.
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "child_process.h"
#include "participant_server.h"
#include "settle/sdk/grpc_branch_server.h"
#include "settle_check_run.h"
#include "temp_dir.h"

namespace {

using settle::testing::CheckRun;
using settle::testing::ChildProcess;
using settle::testing::ParticipantServer;
using settle::testing::ReceivedCall;
using settle::testing::RunSettleCheck;
using settle::testing::ScriptedAnswer;
using settle::testing::TempDir;

const std::string kBody = R"({"account_id":"1","amount":1})";

// The real bank example on ports of its own, with a database in a fresh directory: its
// branches over HTTP and as gRPC methods.
class Bank {
 public:
  explicit Bank(std::vector<std::string> extra = {})
      : process_(Args(dir_, std::move(extra)), dir_.File("bank.err")) {
    const std::string prefix = "bank-participant listening on ";
    const std::string line = process_.WaitForLine(prefix, std::chrono::seconds(30));
    REQUIRE(line.rfind(prefix, 0) == 0);
    base_ = line.substr(prefix.size());
    const std::string grpc_prefix = "bank-participant gRPC branches on ";
    const std::string grpc_line = process_.WaitForLine(grpc_prefix, std::chrono::seconds(30));
    REQUIRE(grpc_line.rfind(grpc_prefix, 0) == 0);
    grpc_ = grpc_line.substr(grpc_prefix.size());
  }
  std::string Api() const { return base_ + "/api"; }
  std::string State() const { return base_ + "/api/accounts/1"; }
  // The bank's gRPC service, as --participant names it.
  std::string GrpcService() const { return "grpc://" + grpc_ + "/bank.Bank"; }

 private:
  static std::vector<std::string> Args(const TempDir& dir, std::vector<std::string> extra) {
    std::vector<std::string> args = {
        BANK_PARTICIPANT_BINARY, "--port", "0", "--grpc-port", "0", "--db", dir.File("bank.db")};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }

  TempDir dir_;
  ChildProcess process_;
  std::string base_;
  std::string grpc_;
};

// An Ed25519 key pair made as docs/operations.md says: the private key file and the public one.
struct KeyFiles {
  explicit KeyFiles(const TempDir& dir)
      : private_key(dir.File("signing.pem")), public_key(dir.File("signing.pub")) {
    REQUIRE(std::system(
                ("openssl genpkey -algorithm ed25519 -out '" + private_key + "'").c_str()) == 0);
    REQUIRE(std::system(("openssl pkey -in '" + private_key + "' -pubout -out '" + public_key + "'")
                            .c_str()) == 0);
  }
  std::string private_key;
  std::string public_key;
};

// A participant with no barrier at all: every call is applied as it comes. Try reserves every
// time, confirm spends every time, cancel releases even without a try, and a late try is
// accepted. Its state is {"balance":B,"frozen":F} at /api/state.
class NaiveParticipant {
 public:
  NaiveParticipant() {
    Apply("/api/TransOutTry", -1, +1);
    Apply("/api/TransOutConfirm", 0, -1);
    Apply("/api/TransOutCancel", +1, -1);
    Apply("/api/TransOut", -1, 0);
    Apply("/api/TransOutCompensate", +1, 0);
    server_.SetHandler("/api/state", [this](const ReceivedCall&) {
      std::lock_guard<std::mutex> lock(mu_);
      return ScriptedAnswer{200, R"({"balance":)" + std::to_string(balance_) + R"(,"frozen":)" +
                                     std::to_string(frozen_) + "}"};
    });
  }
  ParticipantServer& server() { return server_; }
  std::string Api() const { return server_.Url("/api"); }
  // The same handlers as the gRPC methods of naive.Naive.
  std::string GrpcService() {
    if (grpc_port_ == 0) {
      auto port = grpc_.Start("127.0.0.1", 0);
      REQUIRE(port);
      grpc_port_ = *port;
    }
    return "grpc://127.0.0.1:" + std::to_string(grpc_port_) + "/naive.Naive";
  }

 private:
  void Apply(const std::string& path, int balance, int frozen) {
    auto apply = [this, balance, frozen] {
      std::lock_guard<std::mutex> lock(mu_);
      balance_ += balance;
      frozen_ += frozen;
    };
    server_.SetHandler(path, [apply](const ReceivedCall&) {
      apply();
      return ScriptedAnswer{};
    });
    // "/api/TransOutTry" is "/naive.Naive/TransOutTry".
    grpc_.OnBranch("/naive.Naive" + path.substr(4), [apply](const settle::sdk::BranchRequest&) {
      apply();
      return settle::sdk::BranchReply::Success();
    });
  }

  std::mutex mu_;
  int balance_ = 100;
  int frozen_ = 0;
  ParticipantServer server_;  // last: stop serving before the state above goes away
  settle::sdk::GrpcBranchServer grpc_;
  int grpc_port_ = 0;
};

const std::vector<std::string> kTccChecks = {"empty rollback",   "hanging try",
                                             "duplicate try",    "duplicate confirm",
                                             "cancel after try", "duplicate cancel"};
const std::vector<std::string> kSagaChecks = {"empty compensate", "hanging action",
                                              "duplicate action", "compensate after action",
                                              "duplicate compensate"};

}  // namespace

TEST_CASE("settle-check passes every check of the bank example's TCC and saga branches",
          "[fault][settle-check]") {
  Bank bank;
  const std::string state = bank.Api() + "/accounts/1";

  const CheckRun tcc = RunSettleCheck(
      {"--participant", bank.Api(), "--tcc", "TransOut", "--body", kBody, "--state", state});
  INFO(tcc.out << tcc.err);
  CHECK(tcc.exit_code == 0);
  for (const std::string& check : kTccChecks) CHECK(tcc.Verdict(check) == "PASS");
  CHECK(tcc.out.find("TCC: 6 checks, 6 passed, 0 failed, 0 unverified") != std::string::npos);

  const CheckRun saga = RunSettleCheck(
      {"--participant", bank.Api(), "--saga", "TransOut", "--body", kBody, "--state", state});
  INFO(saga.out << saga.err);
  CHECK(saga.exit_code == 0);
  for (const std::string& check : kSagaChecks) CHECK(saga.Verdict(check) == "PASS");
  CHECK(saga.out.find("saga: 5 checks, 5 passed, 0 failed, 0 unverified") != std::string::npos);
}

TEST_CASE("without --state settle-check checks only the answers and says what it could not see",
          "[fault][settle-check]") {
  Bank bank;
  const CheckRun run =
      RunSettleCheck({"--participant", bank.Api(), "--tcc", "TransOut", "--body", kBody});
  INFO(run.out << run.err);
  CHECK(run.exit_code == 0);
  for (const std::string& check : kTccChecks) CHECK(run.Verdict(check) == "UNVERIFIED");
  CHECK(run.Line("hanging try") ==
        "UNVERIFIED  hanging try: a try after its cancel answered FAILURE; whether it changed "
        "nothing needs --state");
  CHECK(run.out.find("without --state URL") != std::string::npos);
}

TEST_CASE("settle-check fails exactly the TCC checks that catch a participant without a barrier",
          "[fault][settle-check]") {
  NaiveParticipant naive;
  const CheckRun run = RunSettleCheck({"--participant", naive.Api(), "--tcc", "TransOut", "--body",
                                       kBody, "--state", naive.server().Url("/api/state")});
  INFO(run.out << run.err);
  CHECK(run.exit_code == 1);
  CHECK(run.Verdict("empty rollback") == "FAIL");     // cancel released nothing reserved
  CHECK(run.Verdict("hanging try") == "FAIL");        // the late try was accepted
  CHECK(run.Verdict("duplicate try") == "FAIL");      // reserved twice
  CHECK(run.Verdict("duplicate confirm") == "FAIL");  // spent twice
  CHECK(run.Verdict("cancel after try") == "PASS");   // one try, one cancel: that much works
  CHECK(run.Verdict("duplicate cancel") == "FAIL");   // released twice
  CHECK(run.Line("hanging try")
            .find("the try after its cancel answered SUCCESS, expected "
                  "FAILURE (409); the state changed") != std::string::npos);
  CHECK(run.Line("empty rollback")
            .find("cancel without try answered SUCCESS but changed the state: before "
                  R"({"balance":100,"frozen":0}, after {"balance":101,"frozen":-1})") !=
        std::string::npos);
  CHECK(run.out.find("TCC: 6 checks, 1 passed, 5 failed, 0 unverified") != std::string::npos);
}

TEST_CASE("settle-check fails exactly the saga checks that catch a participant without a barrier",
          "[fault][settle-check]") {
  NaiveParticipant naive;
  const CheckRun run = RunSettleCheck({"--participant", naive.Api(), "--saga", "TransOut", "--body",
                                       kBody, "--state", naive.server().Url("/api/state")});
  INFO(run.out << run.err);
  CHECK(run.exit_code == 1);
  CHECK(run.Verdict("empty compensate") == "FAIL");
  CHECK(run.Verdict("hanging action") == "FAIL");
  CHECK(run.Verdict("duplicate action") == "FAIL");
  CHECK(run.Verdict("compensate after action") == "PASS");
  CHECK(run.Verdict("duplicate compensate") == "FAIL");
  CHECK(run.out.find("saga: 5 checks, 1 passed, 4 failed, 0 unverified") != std::string::npos);
}

TEST_CASE("with --signing-key settle-check signs its calls and checks that phase 2 needs them",
          "[fault][settle-check][signing]") {
  TempDir keys_dir;
  const KeyFiles keys(keys_dir);

  // The bank verifying the coordinator's signatures: every check passes, the two signature
  // checks included, for a TCC and for a saga.
  Bank verifying({"--coordinator-key", keys.public_key});
  const CheckRun tcc =
      RunSettleCheck({"--participant", verifying.Api(), "--tcc", "TransOut", "--body", kBody,
                      "--state", verifying.State(), "--signing-key", keys.private_key});
  INFO(tcc.out << tcc.err);
  CHECK(tcc.exit_code == 0);
  for (const std::string& check : kTccChecks) CHECK(tcc.Verdict(check) == "PASS");
  CHECK(tcc.Line("unsigned confirm") ==
        "PASS  unsigned confirm: an unsigned confirm was refused (HTTP 401) and changed nothing");
  CHECK(tcc.Verdict("tampered confirm") == "PASS");
  CHECK(tcc.out.find("TCC: 8 checks, 8 passed") != std::string::npos);
  const CheckRun saga =
      RunSettleCheck({"--participant", verifying.Api(), "--saga", "TransOut", "--body", kBody,
                      "--state", verifying.State(), "--signing-key", keys.private_key});
  INFO(saga.out << saga.err);
  CHECK(saga.exit_code == 0);
  CHECK(saga.Verdict("unsigned compensate") == "PASS");
  CHECK(saga.Verdict("tampered compensate") == "PASS");

  // Without the key, the verifying bank refuses settle-check's phase 2.
  const CheckRun unsigned_run =
      RunSettleCheck({"--participant", verifying.Api(), "--tcc", "TransOut", "--body", kBody});
  INFO(unsigned_run.out);
  CHECK(unsigned_run.exit_code == 1);
  CHECK(unsigned_run.Line("duplicate confirm").find("HTTP 401") != std::string::npos);

  // A bank that checks nothing fails exactly the signature checks: anyone may confirm there.
  Bank open;
  const CheckRun forgeable =
      RunSettleCheck({"--participant", open.Api(), "--tcc", "TransOut", "--body", kBody, "--state",
                      open.State(), "--signing-key", keys.private_key});
  INFO(forgeable.out << forgeable.err);
  CHECK(forgeable.exit_code == 1);
  for (const std::string& check : kTccChecks) CHECK(forgeable.Verdict(check) == "PASS");
  CHECK(forgeable.Verdict("unsigned confirm") == "FAIL");
  CHECK(forgeable.Verdict("tampered confirm") == "FAIL");
  CHECK(
      forgeable.Line("unsigned confirm").find("expected a refusal for its signature (HTTP 401)") !=
      std::string::npos);
}

TEST_CASE("with --signing-key settle-check signs its gRPC calls and checks that phase 2 needs them",
          "[fault][settle-check][grpc][signing]") {
  TempDir keys_dir;
  const KeyFiles keys(keys_dir);

  // The bank's gRPC methods verifying the coordinator's signatures: every check passes.
  Bank verifying({"--coordinator-key", keys.public_key});
  const std::string state = verifying.Api() + "/accounts/1";
  const CheckRun tcc =
      RunSettleCheck({"--participant", verifying.GrpcService(), "--tcc", "TransOut", "--body",
                      kBody, "--state", state, "--signing-key", keys.private_key});
  INFO(tcc.out << tcc.err);
  CHECK(tcc.exit_code == 0);
  for (const std::string& check : kTccChecks) CHECK(tcc.Verdict(check) == "PASS");
  CHECK(tcc.Line("unsigned confirm") ==
        "PASS  unsigned confirm: an unsigned confirm was refused (gRPC UNAUTHENTICATED) and "
        "changed nothing");
  CHECK(tcc.Verdict("tampered confirm") == "PASS");
  CHECK(tcc.out.find("TCC: 8 checks, 8 passed") != std::string::npos);
  const CheckRun saga =
      RunSettleCheck({"--participant", verifying.GrpcService(), "--saga", "TransOut", "--body",
                      kBody, "--state", state, "--signing-key", keys.private_key});
  INFO(saga.out << saga.err);
  CHECK(saga.exit_code == 0);
  CHECK(saga.Verdict("unsigned compensate") == "PASS");
  CHECK(saga.Verdict("tampered compensate") == "PASS");

  // Without the key, the verifying bank refuses settle-check's phase 2 over gRPC.
  const CheckRun unsigned_run = RunSettleCheck(
      {"--participant", verifying.GrpcService(), "--tcc", "TransOut", "--body", kBody});
  INFO(unsigned_run.out);
  CHECK(unsigned_run.exit_code == 1);
  CHECK(unsigned_run.Line("duplicate confirm").find("UNAUTHENTICATED") != std::string::npos);

  // gRPC methods that check nothing fail exactly the signature checks.
  Bank open;
  const CheckRun forgeable =
      RunSettleCheck({"--participant", open.GrpcService(), "--tcc", "TransOut", "--body", kBody,
                      "--state", open.Api() + "/accounts/1", "--signing-key", keys.private_key});
  INFO(forgeable.out << forgeable.err);
  CHECK(forgeable.exit_code == 1);
  for (const std::string& check : kTccChecks) CHECK(forgeable.Verdict(check) == "PASS");
  CHECK(forgeable.Verdict("unsigned confirm") == "FAIL");
  CHECK(forgeable.Verdict("tampered confirm") == "FAIL");
  CHECK(forgeable.Line("tampered confirm")
            .find("expected a refusal for its signature (gRPC UNAUTHENTICATED)") !=
        std::string::npos);
}

TEST_CASE("settle-check passes every check of the bank example's gRPC branches",
          "[fault][settle-check][grpc]") {
  Bank bank;
  const std::string state = bank.Api() + "/accounts/1";
  const CheckRun tcc = RunSettleCheck({"--participant", bank.GrpcService(), "--tcc", "TransOut",
                                       "--body", kBody, "--state", state});
  INFO(tcc.out << tcc.err);
  CHECK(tcc.exit_code == 0);
  for (const std::string& check : kTccChecks) CHECK(tcc.Verdict(check) == "PASS");

  // DTM's form of a gRPC method, and the body from a file, byte for byte.
  TempDir dir;
  { std::ofstream(dir.File("body.bin"), std::ios::binary) << kBody; }
  const std::string dtm_form = bank.GrpcService().substr(std::string("grpc://").size());
  const CheckRun saga = RunSettleCheck({"--participant", dtm_form, "--saga", "TransOut",
                                        "--body-file", dir.File("body.bin"), "--state", state});
  INFO(saga.out << saga.err);
  CHECK(saga.exit_code == 0);
  for (const std::string& check : kSagaChecks) CHECK(saga.Verdict(check) == "PASS");
}

TEST_CASE("settle-check fails the gRPC checks that catch a participant without a barrier",
          "[fault][settle-check][grpc]") {
  NaiveParticipant naive;
  const CheckRun run =
      RunSettleCheck({"--participant", naive.GrpcService(), "--tcc", "TransOut", "--body", kBody,
                      "--state", naive.server().Url("/api/state")});
  INFO(run.out << run.err);
  CHECK(run.exit_code == 1);
  CHECK(run.Verdict("empty rollback") == "FAIL");
  CHECK(run.Verdict("hanging try") == "FAIL");
  CHECK(run.Verdict("duplicate try") == "FAIL");
  CHECK(run.Verdict("duplicate confirm") == "FAIL");
  CHECK(run.Verdict("cancel after try") == "PASS");
  CHECK(run.Verdict("duplicate cancel") == "FAIL");
  CHECK(run.Line("hanging try").find("the try after its cancel answered SUCCESS") !=
        std::string::npos);
}

TEST_CASE("settle-check reports a gRPC method's status code as the coordinator reads it",
          "[fault][settle-check][grpc]") {
  NaiveParticipant naive;
  // No such methods: UNIMPLEMENTED is an error, neither SUCCESS nor FAILURE.
  const CheckRun run =
      RunSettleCheck({"--participant", naive.GrpcService(), "--saga", "Missing", "--body", kBody});
  INFO(run.out << run.err);
  CHECK(run.exit_code == 1);
  CHECK(run.Line("empty compensate")
            .find("answered gRPC UNIMPLEMENTED: no branch handler for /naive.Naive/"
                  "MissingCompensate") != std::string::npos);
}

TEST_CASE("settle-check exits 2 when a gRPC participant cannot be reached",
          "[fault][settle-check][grpc]") {
  std::string service;
  {
    NaiveParticipant gone;  // its port is free again once it is destroyed
    service = gone.GrpcService();
  }
  const CheckRun run =
      RunSettleCheck({"--participant", service, "--tcc", "TransOut", "--body", kBody});
  INFO(run.out << run.err);
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("cannot reach the participant") != std::string::npos);
}

TEST_CASE("settle-check calls each branch as the coordinator does, one gid per check",
          "[fault][settle-check]") {
  NaiveParticipant naive;
  const CheckRun run = RunSettleCheck({"--participant", naive.Api() + "/", "--tcc", "TransOut",
                                       "--body", kBody, "--state", naive.server().Url("/api/state"),
                                       "--header", "Authorization: Bearer secret"});
  INFO(run.out << run.err);
  REQUIRE(run.exit_code == 1);

  const std::map<std::string, std::string> op_of_path = {{"/api/TransOutTry", "try"},
                                                         {"/api/TransOutConfirm", "confirm"},
                                                         {"/api/TransOutCancel", "cancel"}};
  std::set<std::string> gids;
  std::size_t branch_calls = 0;
  for (const ReceivedCall& call : naive.server().Calls()) {
    CAPTURE(call.path);
    CHECK(call.headers.count("Authorization") == 1);
    if (call.path == "/api/state") {
      CHECK(call.method == "GET");
      continue;
    }
    ++branch_calls;
    REQUIRE(op_of_path.count(call.path) == 1);
    CHECK(call.method == "POST");
    CHECK(call.body == kBody);
    const auto content_type = call.headers.find("Content-Type");
    CHECK((content_type != call.headers.end() && content_type->second == "application/json"));
    CHECK(call.query.at("op") == op_of_path.at(call.path));
    CHECK(call.query.at("trans_type") == "tcc");
    CHECK(call.query.at("branch_id") == "01");
    CHECK(call.query.at("gid").rfind("settle-check-", 0) == 0);
    gids.insert(call.query.at("gid"));
  }
  CHECK(branch_calls >= 12);
  CHECK(gids.size() == 6);
}

TEST_CASE("settle-check fails every check of a participant that answers 500 to everything",
          "[fault][settle-check]") {
  ParticipantServer server;
  for (const char* path : {"/api/PayTry", "/api/PayConfirm", "/api/PayCancel"}) {
    server.SetDefault(path, ScriptedAnswer{500, R"({"message":"boom"})"});
  }
  const CheckRun run =
      RunSettleCheck({"--participant", server.Url("/api"), "--tcc", "Pay", "--body", kBody});
  INFO(run.out << run.err);
  CHECK(run.exit_code == 1);
  for (const std::string& check : kTccChecks) CHECK(run.Verdict(check) == "FAIL");
  CHECK(
      run.Line("empty rollback")
          .find(
              R"(the cancel without try answered HTTP 500: {"message":"boom"}, expected SUCCESS)") !=
      std::string::npos);
}

TEST_CASE("settle-check exits 2 when the participant cannot be reached", "[fault][settle-check]") {
  std::string api;
  {
    ParticipantServer gone;  // its port is free again once it is destroyed
    api = gone.Url("/api");
  }
  const CheckRun run = RunSettleCheck({"--participant", api, "--tcc", "TransOut", "--body", kBody});
  INFO(run.out << run.err);
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("cannot reach the participant") != std::string::npos);

  const CheckRun state =
      RunSettleCheck({"--participant", api, "--saga", "TransOut", "--state", api + "/state"});
  INFO(state.out << state.err);
  CHECK(state.exit_code == 2);
  CHECK(state.err.find("--state " + api + "/state") != std::string::npos);
}

TEST_CASE("settle-check exits 2 with a message on bad arguments", "[fault][settle-check]") {
  const std::string api = "http://127.0.0.1:9/api";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--participant", api}, "--tcc NAME, --saga NAME or --entry URL"},
      {{"--participant", api, "--tcc", "A", "--saga", "B"}, "not both"},
      {{"--participant", api, "--saga", "A", "--try", api + "/ATry"}, "not both"},
      {{"--tcc", "TransOut"}, "--try: needed"},
      {{"--participant", "ftp://x", "--tcc", "TransOut"}, "http://"},
      {{"--participant", api, "--tcc", "TransOut", "--body", "{oops"}, "--body: not valid JSON"},
      {{"--participant", api, "--tcc", "TransOut", "--timeout", "soon"}, "--timeout soon"},
      {{"--participant", api, "--tcc", "TransOut", "--timeout", "0"}, "must be positive"},
      {{"--participant", api, "--tcc", "TransOut", "--header", "no colon"}, "'Name: value'"},
      {{"--participant", api, "--tcc", "TransOut", "--state", "localhost"}, "--state localhost"},
      {{"--participant", api, "--tcc", "TransOut", "--bogus"}, "--bogus"},
      {{"--participant", "grpc://127.0.0.1:9", "--tcc", "TransOut"}, "package.Service"},
      {{"--participant", "grpc://127.0.0.1:9/a.B", "--try", "grpc://127.0.0.1:9/Try", "--tcc", "T"},
       "--try grpc://127.0.0.1:9/Try"},
      {{"--participant", api, "--tcc", "TransOut", "--body", "{}", "--body-file", "/dev/null"},
       "--body-file: the body of a branch check, instead of --body"},
      {{"--participant", api, "--tcc", "TransOut", "--body-file", "/nonexistent/body"},
       "--body-file: cannot read /nonexistent/body"},
      {{"--participant", api, "--tcc", "TransOut", "--signing-key", "/nonexistent/key"},
       "--signing-key: cannot read /nonexistent/key"},
      {{"--participant", "grpc://127.0.0.1:9/a.B", "--tcc", "T", "--signing-key", "/dev/null"},
       "--signing-key: /dev/null: the file is empty; expected an Ed25519 private key in PEM"},
  };
  for (const auto& [args, message] : cases) {
    const CheckRun run = RunSettleCheck(args);
    INFO(run.out << run.err);
    CHECK(run.exit_code == 2);
    CHECK(run.err.find(message) != std::string::npos);
    CHECK(run.out.empty());
  }
}

TEST_CASE("settle-check's help warns that it changes the participant's state",
          "[fault][settle-check]") {
  const CheckRun run = RunSettleCheck({"--help"});
  CHECK(run.exit_code == 0);
  CHECK(run.out.find("changes its state") != std::string::npos);
  CHECK(run.out.find("test instance") != std::string::npos);
}
