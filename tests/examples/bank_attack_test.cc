// Issue 42's attacks on a bank, tried as an attacker would, against the real settled (signing
// with --signing-key) and real bank-participant processes (--coordinator-key), over HTTP and
// gRPC. Each is judged by the banks' balances: no money moves that settled was not asked to
// move. Attack 1 (a client's URL naming the protocol's keys) and its refusal at submit are
// tested where those rules live (docs/protocol.md §4.9, "What a signature binds").
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <grpcpp/grpcpp.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <fstream>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "child_process.h"
#include "eventually.h"
#include "example_process.h"
#include "fault_proxy.h"
#include "file_text.h"
#include "json_client.h"
#include "raw_connection.h"
#include "settle/core/base64.h"
#include "settle/core/grpc_target.h"
#include "settle/grpc_unary/call_signing.h"
#include "settle/grpc_unary/unary_call.h"
#include "settle/sdk/grpc_client.h"
#include "settle/sdk/tcc.h"
#include "settle/signing/keys.h"
#include "settled_process.h"
#include "temp_dir.h"

namespace settle {
namespace {

using testing::ChildProcess;
using testing::FaultProxy;
using testing::JsonClient;
using testing::SettledProcess;
using testing::TempDir;

constexpr auto kWait = std::chrono::seconds(20);

// An Ed25519 key pair, as files: the private key for its signer (settled, or a workflow's
// service with `stem` "service"), the public one for banks.
struct SettledKey {
  explicit SettledKey(TempDir& dir, const std::string& stem = "settled")
      : private_file(dir.File(stem + ".pem")), public_file(dir.File(stem + ".pub")) {
    EVP_PKEY* key = EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519");
    REQUIRE(key != nullptr);
    for (const bool private_half : {true, false}) {
      BIO* bio = BIO_new(BIO_s_mem());
      REQUIRE((private_half
                   ? PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr)
                   : PEM_write_bio_PUBKEY(bio, key)) == 1);
      char* data = nullptr;
      const long size = BIO_get_mem_data(bio, &data);
      std::ofstream(private_half ? private_file : public_file)
          << std::string(data, static_cast<std::size_t>(size));
      BIO_free(bio);
    }
    EVP_PKEY_free(key);
  }
  signing::SigningKey Signer() const {
    auto key = signing::SigningKey::FromText(testing::ReadFile(private_file));
    REQUIRE(key);
    return *key;
  }
  std::string private_file;
  std::string public_file;
};

// A bank-participant process with three accounts of 100, requiring settled's signatures;
// `extra` adds arguments (--authority, --grpc-port).
struct Bank {
  Bank(TempDir& dir, const std::string& name, const SettledKey& key,
       std::vector<std::string> extra = {}) {
    std::vector<std::string> argv = {BANK_BINARY,
                                     "--port",
                                     "0",
                                     "--db",
                                     dir.File(name + ".db"),
                                     "--accounts",
                                     "3",
                                     "--initial-balance",
                                     "100",
                                     "--coordinator-key",
                                     key.public_file};
    argv.insert(argv.end(), extra.begin(), extra.end());
    const bool grpc =
        std::find(extra.begin(), extra.end(), std::string("--grpc-port")) != extra.end();
    process = std::make_unique<ChildProcess>(argv, dir.File(name + ".log"));
    http_port = testing::ListeningPort(*process);
    REQUIRE(http_port > 0);
    if (grpc) {
      const std::string line = process->WaitForLine("gRPC branches on", kWait);
      const std::size_t colon = line.rfind(':');
      REQUIRE(colon != std::string::npos);
      grpc_port = std::stoi(line.substr(colon + 1));
    }
  }
  // {balance, frozen} of `account`, through GET /api/accounts/ID.
  std::pair<long long, long long> Account(const std::string& account) {
    JsonClient client(http_port);
    const auto r = client.Get("/api/accounts/" + account);
    REQUIRE(r.status == 200);
    return {r.json["balance"].get<long long>(), r.json["frozen"].get<long long>()};
  }
  long long Balance(const std::string& account) { return Account(account).first; }
  // This bank's count of refusals for `reason`, from its GET /metrics.
  long long Refusals(const std::string& reason) {
    JsonClient client(http_port);
    const std::string text = client.Get("/metrics").body;
    const std::regex sample("settle_participant_signature_refusals_total\\{reason=\"" + reason +
                            "\"\\} ([0-9]+)");
    std::smatch match;
    return std::regex_search(text, match, sample) ? std::stoll(match[1]) : -1;
  }
  std::unique_ptr<ChildProcess> process;
  int http_port = 0;
  int grpc_port = 0;
};

// The transfer example, as the bank's users run it.
std::unique_ptr<ChildProcess> Transfer(TempDir& dir, int settled_port, const std::string& mode,
                                       const std::string& bank, const std::string& from,
                                       const std::string& to, int amount) {
  return std::make_unique<ChildProcess>(
      std::vector<std::string>{TRANSFER_BINARY, "--coordinator",
                               "http://127.0.0.1:" + std::to_string(settled_port), "--from-bank",
                               bank, "--to-bank", bank, "--from", from, "--to", to, "--amount",
                               std::to_string(amount), "--mode", mode},
      dir.File("transfer-" + mode + ".log"));
}

// `request` (as a proxy forwards it) with its Host field set to `host`, and `extra` lines added.
std::string WithHost(const std::string& request, const std::string& host,
                     const std::string& extra = "") {
  static const std::regex host_line("\r\nHost: [^\r]*\r\n", std::regex::icase);
  return std::regex_replace(request, host_line, "\r\nHost: " + host + "\r\n" + extra,
                            std::regex_constants::format_first_only);
}

// Attack 2 over HTTP: anyone who reads one participant's traffic (here, a proxy in front of
// bank C) replays a call settled signed for C to bank B, which trusts the same key.
TEST_CASE(
    "a saga action settled signed for one bank, captured and replayed to another, moves "
    "no money there",
    "[bank][attack][process]") {
  TempDir dir;
  const SettledKey key(dir);
  SettledProcess settled(dir.File("settle.db"),
                         {"--signing-key", key.private_file, "--retry-interval", "100ms"});
  // settled reaches C through the proxy, so C answers to the proxy's name.
  FaultProxy proxy(1);
  const std::string c_name = "127.0.0.1:" + std::to_string(proxy.port());
  Bank c(dir, "bank-c", key, {"--authority", c_name});
  proxy.SetUpstream(c.http_port);
  Bank b(dir, "bank-b", key);

  auto transfer = Transfer(dir, settled.port(), "saga", proxy.Url(""), "1", "3", 7);
  CHECK_FALSE(transfer->WaitForLine("status succeed", kWait).empty());
  CHECK(transfer->Wait(kWait) == 0);
  CHECK(c.Balance("1") == 93);
  CHECK(c.Balance("3") == 107);
  const std::string captured = proxy.LastRequest("/api/TransIn");
  REQUIRE(captured.find("Signature-Input: settle=") != std::string::npos);

  // Replayed to B as captured (C's Host), with B's own Host, and with C's name moved to
  // X-Forwarded-Host: refused each time, before the barrier.
  const std::string b_name = "127.0.0.1:" + std::to_string(b.http_port);
  for (const std::string& replay :
       {captured, WithHost(captured, b_name),
        WithHost(captured, b_name, "X-Forwarded-Host: " + c_name + "\r\n")}) {
    testing::RawConnection to_b(b.http_port);
    REQUIRE(to_b.Send(replay));
    const auto answer = to_b.Read();
    CHECK(answer.status == 401);
    CHECK(answer.body.find("signature: ") != std::string::npos);
  }
  CHECK(b.Refusals("authority_mismatch") == 2);
  CHECK(b.Refusals("bad_signature") == 1);
  for (const char* account : {"1", "2", "3"}) CHECK(b.Account(account) == std::pair(100LL, 0LL));

  // At C, which it was signed for, the same call is the one already run: the barrier makes it
  // a no-op.
  testing::RawConnection to_c(c.http_port);
  REQUIRE(to_c.Send(captured));
  CHECK(to_c.Read().status == 200);
  CHECK(c.Balance("3") == 107);
  // The refusals are in B's log, with the caller's address and the gid named.
  CHECK(testing::ReadFile(dir.File("bank-b.log")).find("from 127.0.0.1:") != std::string::npos);
}

// A gRPC channel to 127.0.0.1:`port` whose calls carry `authority` as their :authority.
std::shared_ptr<grpc::Channel> ChannelAs(int port, const std::string& authority) {
  grpc::ChannelArguments args;
  args.SetString(GRPC_ARG_DEFAULT_AUTHORITY, authority);
  return grpc::CreateCustomChannel("127.0.0.1:" + std::to_string(port),
                                   grpc::InsecureChannelCredentials(), args);
}

// Attack 2 over gRPC: the call settled makes to C's gRPC method, as settled signs it, sent to
// B's gRPC port with C's :authority.
TEST_CASE("a gRPC saga action settled signed for one bank moves no money at another",
          "[bank][attack][grpc][process]") {
  TempDir dir;
  const SettledKey key(dir);
  SettledProcess settled(dir.File("settle.db"),
                         {"--signing-key", key.private_file, "--retry-interval", "100ms"});
  Bank c(dir, "bank-c", key, {"--grpc-port", "0"});
  Bank b(dir, "bank-b", key, {"--grpc-port", "0"});
  const std::string c_grpc = "127.0.0.1:" + std::to_string(c.grpc_port);

  auto transfer = Transfer(dir, settled.port(), "saga", c_grpc, "1", "3", 7);
  const std::string gid_line = transfer->WaitForLine("gid ", kWait);
  REQUIRE_FALSE(gid_line.empty());
  const std::string gid = gid_line.substr(4);
  CHECK_FALSE(transfer->WaitForLine("status succeed", kWait).empty());
  CHECK(transfer->Wait(kWait) == 0);
  CHECK(c.Balance("3") == 107);

  // The credit settled made to C (branch 02), signed as settled signed it.
  auto target = ParseGrpcTarget(c_grpc + "/bank.Bank/TransIn");
  REQUIRE(target);
  const auto signed_call = [&] {
    grpc_unary::UnaryRequest request{.method = "/bank.Bank/TransIn",
                                     .message = R"({"account_id":"3","amount":7})",
                                     .timeout = std::chrono::seconds(10)};
    grpc_unary::AddBranchMetadata(request.metadata, {.gid = gid,
                                                     .trans_type = "saga",
                                                     .branch_id = "02",
                                                     .op = "action",
                                                     .dtm = "127.0.0.1:36790"});
    REQUIRE(grpc_unary::SignUnary(request, *target, key.Signer(), std::time(nullptr)).ok());
    return request;
  };
  const grpc_unary::UnaryAnswer at_b =
      grpc_unary::CallUnary(ChannelAs(b.grpc_port, c_grpc), signed_call());
  CHECK(at_b.code == static_cast<int>(grpc::StatusCode::UNAUTHENTICATED));
  CHECK(at_b.message.find("signed for authority \"" + c_grpc + "\"") != std::string::npos);
  CHECK(b.Refusals("authority_mismatch") == 1);
  for (const char* account : {"1", "2", "3"}) CHECK(b.Account(account) == std::pair(100LL, 0LL));
  // At C it is the call already run.
  CHECK(grpc_unary::CallUnary(ChannelAs(c.grpc_port, c_grpc), signed_call()).code == 0);
  CHECK(c.Balance("3") == 107);
}

// An honest TCC transfer of 5 from account 1 to account 2 of one bank, as the bank's users run
// it, held at its TransIn Try: settled (signing) has prepared it, the TransOut Try has frozen the
// 5, and the TransIn Try waits at a proxy in front of the bank until ReleaseAndSucceed.
struct HeldTransfer {
  HeldTransfer()
      : key(dir),
        settled(dir.File("settle.db"),
                {"--signing-key", key.private_file, "--retry-interval", "100ms"}),
        proxy(1),
        bank(dir, "bank", key, {"--authority", "127.0.0.1:" + std::to_string(proxy.port())}) {
    proxy.SetUpstream(bank.http_port);
    proxy.AddRule({.path = kHeldPath, .fault = testing::Fault::kHold});
    transfer = Transfer(dir, settled.port(), "tcc", proxy.Url(""), "1", "2", 5);
    const std::string gid_line = transfer->WaitForLine("gid ", kWait);
    REQUIRE_FALSE(gid_line.empty());
    gid = gid_line.substr(4);
    REQUIRE(proxy.WaitForHeld(kHeldPath, 1));
  }
  // Lets the TransIn Try through: the transfer succeeds.
  void ReleaseAndSucceed() {
    proxy.Release(kHeldPath);
    CHECK_FALSE(transfer->WaitForLine("status succeed", kWait).empty());
    CHECK(transfer->Wait(kWait) == 0);
  }

  static constexpr const char* kHeldPath = "/api/TransInTry";
  TempDir dir;
  const SettledKey key;
  SettledProcess settled;
  FaultProxy proxy;
  Bank bank;  // behind `proxy`, which its signed calls name
  std::unique_ptr<ChildProcess> transfer;
  std::string gid;
};

// Attack 3 over HTTP: while the initiator's TransInTry is on its way (held at a proxy), the
// attacker, who read the prepared gid off /all, sends that gid's Try first with another
// account and amount; and an unsigned TransOutTry with an invented gid, to freeze a balance.
TEST_CASE(
    "an unsigned Try sent ahead of the initiator's decides nothing: the transfer moves "
    "exactly what was registered",
    "[bank][attack][tcc][process]") {
  HeldTransfer held;
  Bank& bank = held.bank;
  // What /all tells anyone with a read token (or anyone, without tokens).
  JsonClient api(held.settled.port());
  CHECK(api.Get("/api/settle/all").body.find(held.gid) != std::string::npos);

  JsonClient attacker(bank.http_port);
  const auto ahead =
      attacker.Post("/api/TransInTry?gid=" + held.gid + "&trans_type=tcc&branch_id=02&op=try",
                    R"({"account_id":"3","amount":50})");
  CHECK(ahead.status == 401);
  const auto invented =
      attacker.Post("/api/TransOutTry?gid=invented-1&trans_type=tcc&branch_id=01&op=try",
                    R"({"account_id":"1","amount":50})");
  CHECK(invented.status == 401);
  CHECK(bank.Account("1") == std::pair(95LL, 5LL));  // the transfer's own freeze alone

  held.ReleaseAndSucceed();
  CHECK(bank.Account("1") == std::pair(95LL, 0LL));
  CHECK(bank.Account("2") == std::pair(105LL, 0LL));
  CHECK(bank.Account("3") == std::pair(100LL, 0LL));
  CHECK(bank.Refusals("unsigned") == 2);
}

// Attack 3 over gRPC: the initiator is the SDK's GrpcClient; the attacker's Try reaches the
// bank's gRPC method after the prepare and before the initiator's own Try.
TEST_CASE("an unsigned gRPC Try sent ahead of the initiator's decides nothing",
          "[bank][attack][tcc][grpc][process]") {
  TempDir dir;
  const SettledKey key(dir);
  testing::SettledWithGrpc settled(dir.File("settle.db"),
                                   {"--signing-key", key.private_file, "--retry-interval", "100ms"},
                                   dir.File("settled"));
  Bank bank(dir, "bank", key, {"--grpc-port", "0"});
  const std::string methods = "127.0.0.1:" + std::to_string(bank.grpc_port) + "/bank.Bank/";
  auto client = sdk::GrpcClient::Create("127.0.0.1:" + std::to_string(settled.grpc_port));
  REQUIRE(client);

  grpc_unary::UnaryAnswer ahead;
  sdk::TransOptions options;
  options.wait_result = true;
  auto outcome = sdk::RunTcc(**client, "grpc-attack-1", options, [&](sdk::Tcc& tcc) -> Status {
    auto out = tcc.CallBranch(R"({"account_id":"1","amount":5})", methods + "TransOutTry",
                              methods + "TransOutConfirm", methods + "TransOutCancel");
    if (!out) return out.status();
    // The attacker's Try for the same gid and the branch the initiator registers next.
    grpc_unary::UnaryRequest forged{.method = "/bank.Bank/TransInTry",
                                    .message = R"({"account_id":"3","amount":50})",
                                    .timeout = std::chrono::seconds(10)};
    grpc_unary::AddBranchMetadata(
        forged.metadata,
        {.gid = "grpc-attack-1", .trans_type = "tcc", .branch_id = "02", .op = "try"});
    const std::string bank_grpc = "127.0.0.1:" + std::to_string(bank.grpc_port);
    ahead = grpc_unary::CallUnary(ChannelAs(bank.grpc_port, bank_grpc), std::move(forged));
    auto in = tcc.CallBranch(R"({"account_id":"2","amount":5})", methods + "TransInTry",
                             methods + "TransInConfirm", methods + "TransInCancel");
    return in ? Status::Ok() : in.status();
  });
  CHECK(ahead.code == static_cast<int>(grpc::StatusCode::UNAUTHENTICATED));
  REQUIRE(outcome);
  CHECK(outcome->status == GlobalStatus::kSucceed);
  CHECK(bank.Account("1") == std::pair(95LL, 0LL));
  CHECK(bank.Account("2") == std::pair(105LL, 0LL));
  CHECK(bank.Account("3") == std::pair(100LL, 0LL));
  CHECK(bank.Refusals("unsigned") == 1);
}

// A workflow's resume call names the workflow as its op, signed by settled and sent to the
// client's query_prepared. Named "confirm" and aimed at a bank's confirm, it would spend what an
// honest transfer's Try froze. Judged by the money: the honest transfer moves what it was asked
// to, and the workflows named as ops are refused before anything is stored or sent.
TEST_CASE(
    "a workflow named as a branch op cannot make settled sign a confirm that spends another "
    "transfer's frozen money",
    "[bank][attack][workflow][process]") {
  // An honest transfer of 5 from account 1, held after its TransOut Try froze the 5.
  HeldTransfer honest;
  Bank& bank = honest.bank;
  CHECK(bank.Account("1") == std::pair(95LL, 5LL));

  JsonClient attacker(honest.settled.port());
  const std::string confirm_url = honest.proxy.Url("/api/TransOutConfirm");
  auto prepare = [&](const std::string& gid, const std::string& name) {
    const nlohmann::json body = {
        {"gid", gid},
        {"trans_type", "workflow"},
        {"custom_data",
         nlohmann::json{{"name", name}, {"data", Base64Encode(R"({"account_id":"1","amount":5})")}}
             .dump()},
        {"query_prepared", confirm_url}};
    return attacker.Post("/api/dtmsvr/prepareWorkflow", body.dump());
  };
  int n = 0;
  for (const char* op : {"confirm", "Confirm", "try", "cancel", "action", "compensate", "msg",
                         "commit", "rollback"}) {
    INFO(op);
    const std::string gid = "wf-as-op-" + std::to_string(++n);
    const auto refused = prepare(gid, op);
    CHECK(refused.status == 400);
    CHECK(refused.body.find("custom_data.name: must not be a branch op") != std::string::npos);
    CHECK(attacker.Get("/api/settle/query?gid=" + gid).json["transaction"].is_null());
  }

  // Any other name is a workflow: its resume reaches the bank, signed, naming an op the bank
  // does not serve there, and is refused before the barrier. Nothing moves.
  REQUIRE(prepare("wf-named-drain", "drain").status == 200);
  std::string bank_said;
  CHECK(testing::Eventually(
      [&] {
        const auto query = attacker.Get("/api/settle/query?gid=wf-named-drain");
        if (query.status != 200) return false;
        for (const auto& branch : query.json["branches"]) {
          if (branch.value("attempts", 0) > 0) {
            bank_said = branch.value("last_error", "");
            return true;
          }
        }
        return false;
      },
      kWait));
  CHECK(bank_said.find("op: expected") != std::string::npos);
  CHECK(bank.Account("1") == std::pair(95LL, 5LL));

  honest.ReleaseAndSucceed();
  // Its confirms spend what its own Try froze, and nothing is left to retry.
  CHECK(testing::Eventually(
      [&] {
        const auto query = attacker.Get("/api/settle/query?gid=" + honest.gid);
        if (query.status != 200 || query.json["branches"].empty()) return false;
        for (const auto& branch : query.json["branches"]) {
          if (branch.value("op", "") == "confirm" && branch.value("status", "") != "succeed") {
            return false;
          }
        }
        return true;
      },
      kWait));
  CHECK(bank.Account("1") == std::pair(95LL, 0LL));
  CHECK(bank.Account("2") == std::pair(105LL, 0LL));
  CHECK(bank.Account("3") == std::pair(100LL, 0LL));
}

// A workflow's resume URL is its service's, and whoever prepares a workflow names one. Mallory,
// who holds a client token of her own, prepares a "transfer" whose input pays her, with
// bank-workflow's resume URL: settled resumes it there, and the service would sign its steps
// with the key the banks trust for workflows. The service resumes only the workflows settled
// shows it (docs/protocol.md §3.16): with its own token, another client's gid is absent (§1.6),
// so it refuses, and no money moves.
TEST_CASE("a workflow another client prepares with a service's resume URL moves no money",
          "[bank][attack][workflow][process]") {
  constexpr const char* kServiceToken = "client-token-of-bank-workflow";
  constexpr const char* kMalloryToken = "client-token-of-mallory-0000";
  TempDir dir;
  const SettledKey key(dir);
  const SettledKey service_key(dir, "service");
  std::ofstream(dir.File("tokens")) << "client " << kServiceToken << " # bank-workflow\n"
                                    << "client " << kMalloryToken << " # mallory\n";
  std::ofstream(dir.File("service.token")) << kServiceToken << "\n";
  SettledProcess settled(dir.File("settle.db"),
                         {"--signing-key", key.private_file, "--token-file", dir.File("tokens"),
                          "--retry-interval", "100ms", "--retry-max", "500ms"});
  Bank a(dir, "bank-a", key, {"--workflow-key", service_key.public_file});
  Bank b(dir, "bank-b", key, {"--workflow-key", service_key.public_file});
  const int port = testing::UnusedPort();
  ChildProcess service(
      std::vector<std::string>{BANK_WORKFLOW_BINARY, "--coordinator",
                               "http://127.0.0.1:" + std::to_string(settled.port()), "--port",
                               std::to_string(port), "--signing-key", service_key.private_file,
                               "--token-file", dir.File("service.token"), "--retry-interval", "1"},
      dir.File("bank-workflow.log"));
  REQUIRE_FALSE(service.WaitForLine("bank-workflow listening on", kWait).empty());
  const auto input = [&](const std::string& to, int amount) {
    return nlohmann::json{{"from_bank", "http://127.0.0.1:" + std::to_string(a.http_port)},
                          {"from", "1"},
                          {"to_bank", "http://127.0.0.1:" + std::to_string(b.http_port)},
                          {"to", to},
                          {"amount", amount}}
        .dump();
  };

  // The service's own transfer moves money: it is wired to.
  JsonClient users(port);
  REQUIRE(users.Post("/api/transfers?gid=honest-1", input("2", 10)).status == 200);
  CHECK(a.Account("1") == std::pair(90LL, 0LL));
  CHECK(b.Account("2") == std::pair(110LL, 0LL));

  JsonClient mallory = testing::ClientWith(settled.port(), kMalloryToken);
  const nlohmann::json custom = {{"name", "transfer"}, {"data", Base64Encode(input("3", 50))}};
  REQUIRE(mallory
              .PostJson("/api/dtmsvr/prepareWorkflow",
                        {{"gid", "mallory-1"},
                         {"trans_type", "workflow"},
                         {"custom_data", custom.dump()},
                         {"query_prepared", "http://127.0.0.1:" + std::to_string(port) + "/resume"},
                         {"retry_interval", 1}})
              .status == 200);
  // settled resumes it at the service, twice at least; the service refuses it each time.
  std::string last_error;
  const bool refused_twice = testing::Eventually(
      [&] {
        const auto q = mallory.Get("/api/dtmsvr/query?gid=mallory-1");
        for (const auto& branch : q.json["branches"]) {
          if (branch.value("op", "") != "resume") continue;
          last_error = branch.value("last_error", "");
          return branch.value("attempts", 0) >= 2;
        }
        return false;
      },
      kWait);
  INFO("the resume's last_error: " << last_error);
  REQUIRE(refused_twice);
  CHECK_THAT(last_error, Catch::Contains("no workflow mallory-1 to resume"));
  CHECK(a.Account("1") == std::pair(90LL, 0LL));
  CHECK(b.Account("3") == std::pair(100LL, 0LL));

  // Her gid handed to the service by a user of its own is refused as another's (400), and
  // starts nothing.
  const auto taken = users.Post("/api/transfers?gid=mallory-1", input("2", 10));
  CHECK(taken.status == 400);
  CHECK_THAT(taken.body, Catch::Contains("already exists"));
  CHECK(a.Account("1") == std::pair(90LL, 0LL));
  CHECK(b.Account("2") == std::pair(110LL, 0LL));
  // Her workflow is still hers, prepared: settled goes on resuming it until she ends it.
  CHECK(mallory.Get("/api/dtmsvr/query?gid=mallory-1").json["transaction"]["status"] == "prepared");
}

}  // namespace
}  // namespace settle
