// Signed gRPC branch calls (docs/protocol.md §4.9), end to end: the settle of this process
// signs every gRPC call it makes, and a GrpcBranchServer given its key runs only the calls it
// signed; anything else is UNAUTHENTICATED before the barrier or any handler runs, over
// plaintext and over TLS. The initiator's GrpcClient signs its own Trys. And mutual TLS, the
// other way: a GrpcBranchServer with a client CA lets in only the holders of its certificates.
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <sqlite3.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <string>

#include <grpcpp/grpcpp.h>
#include "in_process_settled.h"

#include "settle/grpc_unary/call_signing.h"
#include "settle/grpc_unary/unary_call.h"
#include "settle/sdk/grpc_branch_server.h"
#include "settle/sdk/grpc_client.h"
#include "settle/sdk/saga.h"
#include "settle/sdk/signature_refusals.h"
#include "settle/sdk/sqlite_barrier_store.h"
#include "settle/sdk/tcc.h"
#include "temp_dir.h"
#include "test_ca.h"

namespace settle::sdk {
namespace {

using nlohmann::json;
using testing::InProcessSettled;

// settled's key: an HMAC-SHA256 secret of 32 bytes, as `echo "hmac:$(openssl rand -base64 32)"`
// writes it.
constexpr std::string_view kSettledSecret = "hmac:Zm9yIHNldHRsZWQncyBncnBjIGNhbGxzIG9ubHkgLi4u";

// A fresh Ed25519 private key as PEM text (its public half verifies, VerifyingKey reads it).
std::string NewEd25519() {
  EVP_PKEY* key = EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519");
  REQUIRE(key != nullptr);
  BIO* bio = BIO_new(BIO_s_mem());
  REQUIRE(PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr) == 1);
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  std::string text(data, static_cast<std::size_t>(size));
  BIO_free(bio);
  EVP_PKEY_free(key);
  return text;
}

signing::SigningKey Signer(std::string_view text) {
  auto key = signing::SigningKey::FromText(text);
  REQUIRE(key);
  return *key;
}
signing::VerifyingKey Verifier(std::string_view text) {
  auto key = signing::VerifyingKey::FromText(text);
  REQUIRE(key);
  return *key;
}

// A bank whose branches are gRPC methods over the barrier and an account table in one SQLite
// file: /bank.Bank/TransOut debits account 1 by the message's bytes read as a number,
// /bank.Bank/TransIn credits it, their compensations undo it; TCC: /bank.Bank/Try,
// /bank.Bank/Confirm, /bank.Bank/Cancel and an XA's /bank.Bank/Xa (every op) touch nothing but
// the barrier; /bank.Bank/QueryPrepared is a message's back-check.
class GrpcBank {
 public:
  // With `client_ca`, every connection must present a client certificate from it.
  GrpcBank(const std::string& db_path, std::optional<SignedCalls> policy,
           const testing::TestCa::Issued* cert = nullptr, const std::string& client_ca = "")
      : server_(GrpcBranchServerOptions{.threads = 4,
                                        .tls_cert_file = cert ? cert->cert_file : "",
                                        .tls_key_file = cert ? cert->key_file : "",
                                        .tls_client_ca_file = client_ca,
                                        .signed_calls = std::move(policy)}),
        tls_(cert != nullptr) {
    auto store = SqliteBarrierStore::Open(db_path);
    REQUIRE(store);
    store_ = std::move(*store);
    barrier_ = std::make_unique<Barrier>(*store_, clock_);
    auto tx = store_->Begin();
    REQUIRE(tx);
    REQUIRE(sqlite3_exec(SqliteBarrierStore::Connection(**tx),
                         "CREATE TABLE account (id TEXT PRIMARY KEY, balance INTEGER NOT NULL);"
                         "INSERT INTO account VALUES ('1', 1000)",
                         nullptr, nullptr, nullptr) == SQLITE_OK);
    REQUIRE((*tx)->Commit().ok());
    server_.OnAction("/bank.Bank/TransOut", Move(-1))
        .OnCompensate("/bank.Bank/TransOutRevert", Move(+1))
        .OnAction("/bank.Bank/TransIn", Move(+1))
        .OnCompensate("/bank.Bank/TransInRevert", Move(-1))
        .OnTry("/bank.Bank/Try", Move(0))
        .OnConfirm("/bank.Bank/Confirm", Move(0))
        .OnCancel("/bank.Bank/Cancel", Move(0))
        .OnXa("/bank.Bank/Xa", Move(0))
        .OnQueryPrepared("/bank.Bank/QueryPrepared", *barrier_)
        .OnResume("/bank.Bank/Resume", [this](const ResumeRequest&) {
          runs_.fetch_add(1);
          return BranchReply::Success();
        });
    auto port = server_.Start("127.0.0.1", 0);
    REQUIRE(port);
    port_ = *port;
  }

  // The host dialed is "localhost" over TLS (the certificate's name), "127.0.0.1" otherwise.
  std::string Url(const std::string& method) const {
    return (tls_ ? "grpcs://localhost:" : "grpc://127.0.0.1:") + std::to_string(port_) +
           "/bank.Bank/" + method;
  }
  std::int64_t Balance() { return Read("SELECT balance FROM account WHERE id = '1'"); }
  std::int64_t BarrierRows() { return Read("SELECT COUNT(*) FROM barrier"); }
  int runs() const { return runs_.load(); }
  std::uint64_t refusals() const { return server_.signature_refusals(); }
  SignatureRefusalCounts refusal_counts() const { return server_.signature_refusal_counts(); }

 private:
  BranchHandler Move(int sign) {
    return Guarded(*barrier_, [this, sign](const BranchRequest& r, BarrierTransaction& tx) {
      runs_.fetch_add(1);
      if (sign == 0) return Status::Ok();
      const std::string sql = "UPDATE account SET balance = balance + " +
                              std::to_string(sign * std::stoll(r.body)) + " WHERE id = '1'";
      if (sqlite3_exec(SqliteBarrierStore::Connection(tx), sql.c_str(), nullptr, nullptr,
                       nullptr) != SQLITE_OK) {
        return Status::Unavailable("update failed");
      }
      return Status::Ok();
    });
  }
  std::int64_t Read(const std::string& sql) {
    auto tx = store_->Begin();
    REQUIRE(tx);
    sqlite3_stmt* stmt = nullptr;
    REQUIRE(sqlite3_prepare_v2(SqliteBarrierStore::Connection(**tx), sql.c_str(), -1, &stmt,
                               nullptr) == SQLITE_OK);
    std::int64_t value = -1;
    if (sqlite3_step(stmt) == SQLITE_ROW) value = sqlite3_column_int64(stmt, 0);
    sqlite3_finalize(stmt);
    return value;
  }

  SystemClock clock_;
  std::unique_ptr<SqliteBarrierStore> store_;
  std::unique_ptr<Barrier> barrier_;
  std::atomic<int> runs_{0};
  GrpcBranchServer server_;
  bool tls_ = false;
  int port_ = 0;
};

// A branch call made as anyone could make it, straight to the bank: `key` (when given) signs
// it as settled would, then `tamper` changes what is sent.
struct RawCall {
  std::string method = "TransIn";
  std::string gid = "forged-1";
  std::string trans_type = "saga";
  std::string op = "action";
  std::string message = "1000000";
  std::string phase2_url;  // sent as dtm-phase2_url when set (an XA action)
  const signing::SigningKey* key = nullptr;
  std::function<void(grpc_unary::UnaryRequest&)> tamper;
};

// Over TLS it trusts `ca_file` and presents `client` (a client certificate) when given.
grpc_unary::UnaryAnswer Send(const GrpcBank& bank, const RawCall& call,
                             const std::string& ca_file = "",
                             const testing::TestCa::Issued* client = nullptr) {
  auto target = ParseGrpcTarget(bank.Url(call.method));
  REQUIRE(target);
  grpc_unary::UnaryRequest request{
      .method = target->method, .message = call.message, .timeout = std::chrono::seconds(10)};
  grpc_unary::BranchWords words{.gid = call.gid,
                                .trans_type = call.trans_type,
                                .branch_id = "01",
                                .op = call.op,
                                .dtm = "127.0.0.1:36790"};
  if (!call.phase2_url.empty()) words.extra.emplace_back("phase2_url", call.phase2_url);
  grpc_unary::AddBranchMetadata(request.metadata, words);
  if (call.key != nullptr) {
    REQUIRE(grpc_unary::SignUnary(request, *target, *call.key, std::time(nullptr)).ok());
  }
  if (call.tamper) call.tamper(request);
  const auto text_of = [](const std::string& file) {
    std::ifstream in(file);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  grpc_unary::ChannelTls tls;
  if (!ca_file.empty()) tls.pem_roots = text_of(ca_file);
  if (client != nullptr) {
    tls.pem_cert_chain = text_of(client->cert_file);
    tls.pem_private_key = text_of(client->key_file);
  }
  grpc_unary::ChannelPool channels(tls);
  return grpc_unary::CallUnary(channels.To(*target), std::move(request));
}

// The answer is a refusal for the signature, with no verdict's words; its reason.
std::string Refusal(const grpc_unary::UnaryAnswer& answer) {
  CHECK(answer.code == 16);  // UNAUTHENTICATED
  for (std::string_view word : {"FAILURE", "ONGOING", "SUCCESS"}) {
    CHECK(answer.message.find(word) == std::string::npos);
  }
  CHECK(answer.message.starts_with("signature: "));
  return answer.message;
}

void Set(std::vector<std::pair<std::string, std::string>>& metadata, const std::string& key,
         const std::string& value) {
  for (auto& [k, v] : metadata) {
    if (k == key) v = value;
  }
}

std::unique_ptr<Client> HttpClientOf(const InProcessSettled& s) {
  auto client = Client::Create("http://127.0.0.1:" + std::to_string(s.port()) + "/api/settle");
  REQUIRE(client);
  return std::move(*client);
}

TEST_CASE(
    "a GrpcBranchServer that requires signatures runs settled's calls and refuses forged ones "
    "with UNAUTHENTICATED, writing nothing",
    "[sdk][grpc][signing]") {
  const bool tls = GENERATE(false, true);
  INFO((tls ? "over TLS" : "over plaintext"));
  testing::TempDir dir;
  std::optional<testing::TestCa> ca;
  std::optional<testing::TestCa::Issued> cert;
  if (tls) {
    ca.emplace(dir.path());
    cert = ca->IssueForLocalhost();
  }
  const signing::SigningKey settled = Signer(kSettledSecret);
  InProcessSettled s([&](app::ServerConfig& c) {
    c.signing_key = settled;
    if (ca) c.ca_file = ca->ca_file();
  });
  GrpcBank bank(dir.File("bank.db"), SignedCalls{.keys = {Verifier(kSettledSecret)}},
                cert ? &*cert : nullptr);
  const std::string ca_file = ca ? ca->ca_file() : "";

  // settled's calls: a saga that moves 30 out and back in.
  auto client = HttpClientOf(s);
  Saga saga(*client, tls ? "signed-tls" : "signed-plain");
  saga.Add(bank.Url("TransOut"), bank.Url("TransOutRevert"), "30")
      .Add(bank.Url("TransIn"), bank.Url("TransInRevert"), "30");
  saga.options().wait_result = true;
  auto outcome = saga.Submit();
  REQUIRE(outcome);
  CHECK(outcome->status == GlobalStatus::kSucceed);
  CHECK(bank.runs() == 2);
  CHECK(bank.refusals() == 0);
  const std::int64_t balance = bank.Balance();
  const std::int64_t rows = bank.BarrierRows();
  CHECK(balance == 1000);

  // What anyone else could send.
  CHECK(Refusal(Send(bank, {}, ca_file)) == "signature: no signature-input");
  const signing::SigningKey stranger = Signer(NewEd25519());
  CHECK_THAT(Refusal(Send(bank, {.key = &stranger}, ca_file)),
             Catch::StartsWith("signature: unknown keyid \"ed25519-"));
  const std::string does_not_verify =
      "signature: signature does not verify with key \"" + settled.keyid() + "\"";
  // settled's signature over other bytes, with the digest left or made to match.
  CHECK(Refusal(Send(
            bank,
            {.message = "30", .key = &settled, .tamper = [](auto& r) { r.message = "1000000"; }},
            ca_file)) == "signature: content-digest does not match the message");
  CHECK(Refusal(Send(bank,
                     {.message = "30",
                      .key = &settled,
                      .tamper =
                          [](auto& r) {
                            r.message = "1000000";
                            Set(r.metadata, "content-digest",
                                "sha-256=:" + std::string(44, 'A') + ":");
                          }},
                     ca_file))
            .starts_with("signature: content-digest does not match"));
  // Another gid or op than signed, or another method.
  CHECK(Refusal(Send(
            bank,
            {.key = &settled, .tamper = [](auto& r) { Set(r.metadata, "dtm-gid", "forged-2"); }},
            ca_file)) == does_not_verify);
  CHECK(Refusal(Send(bank,
                     {.op = "compensate",
                      .key = &settled,
                      .tamper = [](auto& r) { Set(r.metadata, "dtm-op", "action"); }},
                     ca_file)) == does_not_verify);
  CHECK(Refusal(Send(
            bank,
            {.key = &settled, .tamper = [](auto& r) { r.method = "/bank.Bank/TransOutRevert"; }},
            ca_file)) == does_not_verify);
  // A covered dtm-* key taken away.
  CHECK(Refusal(Send(bank,
                     {.key = &settled,
                      .tamper =
                          [](auto& r) {
                            std::erase_if(r.metadata,
                                          [](const auto& m) { return m.first == "dtm-dtm"; });
                          }},
                     ca_file)) == "signature: dtm-dtm is covered but the call carries no dtm-dtm");

  CHECK(bank.refusals() == 8);
  CHECK(bank.runs() == 2);
  CHECK(bank.Balance() == balance);
  CHECK(bank.BarrierRows() == rows);
  // And a signed one still goes through.
  auto signed_call = Send(bank, {.gid = "direct-1", .message = "5", .key = &settled}, ca_file);
  CHECK(signed_call.code == 0);
  CHECK(bank.Balance() == balance + 5);
}

// Mutual TLS, the other way to tell settled's calls from anyone else's: a GrpcBranchServer
// with a client CA runs the calls of a settled presenting --tls-client-cert, and ends a
// connection without a certificate, with another CA's or an expired one at the handshake.
TEST_CASE(
    "a GrpcBranchServer that requires client certificates runs settled's calls and refuses "
    "everyone else's at the handshake, writing nothing",
    "[sdk][grpc][mtls]") {
  testing::TempDir dir;
  testing::TestCa ca(dir.path());
  testing::TestCa clients(dir.path(), "clients");
  testing::TestCa stranger(dir.path(), "stranger");
  const testing::TestCa::Issued server = ca.IssueForLocalhost();
  const testing::TestCa::Issued settled_cert = clients.IssueClient("settled", "/O=Shop/CN=settled");
  const testing::TestCa::Issued expired =
      clients.IssueExpiredClient("expired", "/O=Shop/CN=settled");
  const testing::TestCa::Issued foreign = stranger.IssueClient("foreign", "/O=Shop/CN=settled");
  InProcessSettled s([&](app::ServerConfig& c) {
    c.ca_file = ca.ca_file();
    c.tls_client_cert = settled_cert.cert_file;
    c.tls_client_key = settled_cert.key_file;
  });
  GrpcBank bank(dir.File("bank.db"), std::nullopt, &server, clients.ca_file());

  auto client = HttpClientOf(s);
  Saga saga(*client, "mtls-saga");
  saga.Add(bank.Url("TransOut"), bank.Url("TransOutRevert"), "30")
      .Add(bank.Url("TransIn"), bank.Url("TransInRevert"), "30");
  saga.options().wait_result = true;
  auto outcome = saga.Submit();
  REQUIRE(outcome);
  CHECK(outcome->status == GlobalStatus::kSucceed);
  CHECK(bank.runs() == 2);
  const std::int64_t rows = bank.BarrierRows();

  constexpr int kUnavailable = 14;
  CHECK(Send(bank, {.gid = "no-cert"}, ca.ca_file()).code == kUnavailable);
  CHECK(Send(bank, {.gid = "foreign"}, ca.ca_file(), &foreign).code == kUnavailable);
  CHECK(Send(bank, {.gid = "expired"}, ca.ca_file(), &expired).code == kUnavailable);
  CHECK(bank.runs() == 2);
  CHECK(bank.Balance() == 1000);
  CHECK(bank.BarrierRows() == rows);
  // The same call with a certificate from the CA is served: what refused the others was theirs.
  CHECK(Send(bank, {.gid = "certified", .message = "5"}, ca.ca_file(), &settled_cert).code == 0);
  CHECK(bank.Balance() == 1005);

  // A client CA without TLS is refused when the server starts.
  GrpcBranchServer plain(GrpcBranchServerOptions{.tls_client_ca_file = clients.ca_file()});
  auto started = plain.Start("127.0.0.1", 0);
  REQUIRE_FALSE(started);
  CHECK_THAT(started.status().message(), Catch::Contains("tls_client_ca_file"));
}

// An initiator's GrpcClient presents its certificate to a settled whose gRPC port requires one.
TEST_CASE("a GrpcClient with a client certificate reaches a settled that requires one",
          "[sdk][grpc][mtls]") {
  testing::TempDir dir;
  testing::TestCa ca(dir.path());
  testing::TestCa clients(dir.path(), "clients");
  const testing::TestCa::Issued server = ca.IssueForLocalhost();
  const testing::TestCa::Issued order = clients.IssueClient("order", "/O=Shop/CN=order-service");
  const testing::TestCa::Issued reader = clients.IssueClient("reader", "/O=Shop/CN=reader");
  InProcessSettled s(
      [&](app::ServerConfig& c) {
        c.grpc.enabled = true;
        c.api.tls = {.cert_file = server.cert_file,
                     .key_file = server.key_file,
                     .client_ca_file = clients.ca_file(),
                     .require_client_certificate = true};
        REQUIRE(c.api.client_certificates
                    .AddFromText("client CN=order-service,O=Shop\nread CN=reader,O=Shop\n")
                    .ok());
      },
      ca.ca_file(), reader.cert_file, reader.key_file);
  GrpcBank bank(dir.File("bank.db"), std::nullopt);
  const std::string address = "grpcs://localhost:" + std::to_string(s.grpc_port());

  auto certified = GrpcClient::Create(address, {.ca_file = ca.ca_file(),
                                                .client_cert_file = order.cert_file,
                                                .client_key_file = order.key_file});
  REQUIRE(certified);
  Saga saga(**certified, "mtls-grpc-client");
  saga.Add(bank.Url("TransOut"), bank.Url("TransOutRevert"), "30");
  REQUIRE(saga.Submit());
  CHECK(s.WaitForStatus("mtls-grpc-client", "succeed"));

  auto bare = GrpcClient::Create(address, {.ca_file = ca.ca_file()});
  REQUIRE(bare);
  Saga refused(**bare, "mtls-grpc-bare");
  refused.Add(bank.Url("TransOut"), bank.Url("TransOutRevert"), "30");
  CHECK_FALSE(refused.Submit());
  CHECK(s.StatusOf("mtls-grpc-bare").empty());

  auto half = GrpcClient::Create(address, {.client_cert_file = order.cert_file});
  REQUIRE_FALSE(half);
  CHECK_THAT(half.status().message(), Catch::Contains("client_cert_file, client_key_file"));
}

TEST_CASE("a GrpcBranchServer runs only calls signed for a name it answers to",
          "[sdk][grpc][signing]") {
  testing::TempDir dir;
  const signing::SigningKey settled = Signer(kSettledSecret);
  SignedCalls policy{.keys = {Verifier(kSettledSecret)}};
  GrpcBank strict(dir.File("strict.db"), policy);
  policy.check_authority = false;
  GrpcBank lenient(dir.File("lenient.db"), policy);
  // Signed for "elsewhere.example:<port>", a name the server does not answer to (it answers to
  // 127.0.0.1:<port> and localhost:<port>), sent to 127.0.0.1:<port>.
  auto elsewhere = [&](const GrpcBank& bank) {
    return Send(bank,
                {.gid = "authority-1",
                 .message = "1",
                 .key = &settled,
                 .tamper = [&](grpc_unary::UnaryRequest& r) {
                   auto target = ParseGrpcTarget(bank.Url("TransIn"));
                   REQUIRE(target);
                   target->host = "elsewhere.example";
                   std::erase_if(r.metadata, [](const auto& m) {
                     return m.first == "signature" || m.first == "signature-input" ||
                            m.first == "content-digest";
                   });
                   REQUIRE(grpc_unary::SignUnary(r, *target, settled, std::time(nullptr)).ok());
                 }});
  };
  CHECK_THAT(Refusal(elsewhere(strict)), Catch::Contains("does not verify"));
  CHECK(strict.runs() == 0);
  // Left out of the check, it still is signed, so a lenient server refuses it too; a signature
  // without the authority passes there.
  CHECK_THAT(Refusal(elsewhere(lenient)), Catch::Contains("does not verify"));
  auto no_authority =
      Send(lenient,
           {.gid = "authority-2",
            .message = "1",
            .key = nullptr,
            .tamper = [&](grpc_unary::UnaryRequest& r) {
              auto target = ParseGrpcTarget(lenient.Url("TransIn"));
              REQUIRE(target);
              target->host = "proxy.internal";
              REQUIRE(grpc_unary::SignUnary(r, *target, settled, std::time(nullptr), false).ok());
            }});
  CHECK(no_authority.code == 0);
  CHECK(lenient.runs() == 1);
  CHECK(Refusal(Send(
            strict,
            {.gid = "authority-3", .key = nullptr, .tamper = [&](grpc_unary::UnaryRequest& r) {
               auto target = ParseGrpcTarget(strict.Url("TransIn"));
               REQUIRE(grpc_unary::SignUnary(r, *target, settled, std::time(nullptr), false).ok());
             }})) == "signature: @authority is not covered");
}

TEST_CASE("while signing is turned on, a GrpcBranchServer lets unsigned calls through",
          "[sdk][grpc][signing]") {
  testing::TempDir dir;
  GrpcBank bank(dir.File("bank.db"),
                SignedCalls{.keys = {Verifier(kSettledSecret)}, .require_signature = false});
  CHECK(Send(bank, {.gid = "g1", .message = "1"}).code == 0);
  const signing::SigningKey settled = Signer(kSettledSecret);
  CHECK(Send(bank, {.gid = "g2", .message = "1", .key = &settled}).code == 0);
  const signing::SigningKey stranger = Signer(NewEd25519());
  CHECK_THAT(Refusal(Send(bank, {.gid = "g3", .message = "1", .key = &stranger})),
             Catch::Contains("unknown keyid"));
  CHECK(bank.runs() == 2);
  CHECK(bank.refusals() == 1);
}

// Over gRPC as over HTTP: each refusal counted under its reason, for the service's metrics.
TEST_CASE("a GrpcBranchServer counts its refusals by reason and exports them as Prometheus text",
          "[sdk][grpc][signing][metrics]") {
  testing::TempDir dir;
  const signing::SigningKey settled = Signer(kSettledSecret);
  GrpcBank bank(dir.File("bank.db"), SignedCalls{.keys = {Verifier(kSettledSecret)}});
  // settled's call signed again as `created` and for `host` (the bank's, unless given).
  auto resigned = [&](std::int64_t created, const std::string& host = "") {
    return [&settled, &bank, created, host](grpc_unary::UnaryRequest& r) {
      auto target = ParseGrpcTarget(bank.Url("TransIn"));
      REQUIRE(target);
      if (!host.empty()) target->host = host;
      REQUIRE(grpc_unary::SignUnary(r, *target, settled, created).ok());
    };
  };
  const std::int64_t now = std::time(nullptr);

  Refusal(Send(bank, {}));
  const signing::SigningKey stranger = Signer(NewEd25519());
  Refusal(Send(bank, {.key = &stranger}));
  Refusal(Send(bank, {.tamper = resigned(now - 3600)}));
  Refusal(Send(
      bank, {.message = "30", .key = &settled, .tamper = [](auto& r) { r.message = "1000000"; }}));
  Refusal(Send(
      bank, {.key = &settled, .tamper = [](auto& r) { Set(r.metadata, "dtm-gid", "forged-2"); }}));
  Refusal(Send(bank, {.key = &settled, .tamper = [](auto& r) {
                        std::erase_if(r.metadata,
                                      [](const auto& m) { return m.first == "dtm-dtm"; });
                      }}));
  // Signed for the :authority settled dialed, which a proxy rewrote and forwarded.
  auto bank_target = ParseGrpcTarget(bank.Url("TransIn"));
  REQUIRE(bank_target);
  const std::string dialed = "bank.example:" + std::to_string(bank_target->port);
  Refusal(Send(bank, {.tamper = [&](grpc_unary::UnaryRequest& r) {
                 resigned(now, "bank.example")(r);
                 r.metadata.emplace_back("x-forwarded-host", dialed);
               }}));
  CHECK(bank.runs() == 0);

  using signing::RefusalKind;
  const SignatureRefusalCounts counts = bank.refusal_counts();
  CHECK(counts.of(RefusalKind::kUnsigned) == 1);
  CHECK(counts.of(RefusalKind::kMalformed) == 0);
  CHECK(counts.of(RefusalKind::kNotCovered) == 1);
  CHECK(counts.of(RefusalKind::kUnknownKey) == 1);
  CHECK(counts.of(RefusalKind::kWrongAlgorithm) == 0);
  CHECK(counts.of(RefusalKind::kOutsideWindow) == 1);
  CHECK(counts.of(RefusalKind::kDigestMismatch) == 1);
  CHECK(counts.of(RefusalKind::kBadSignature) == 1);
  CHECK(counts.of(RefusalKind::kAuthorityMismatch) == 1);
  CHECK(bank.refusals() == 7);
  const std::string text = SignatureRefusalsText(counts);
  for (const char* line :
       {"{reason=\"unsigned\"} 1\n", "{reason=\"malformed\"} 0\n", "{reason=\"not_covered\"} 1\n",
        "{reason=\"unknown_key\"} 1\n", "{reason=\"wrong_algorithm\"} 0\n",
        "{reason=\"outside_window\"} 1\n", "{reason=\"digest_mismatch\"} 1\n",
        "{reason=\"bad_signature\"} 1\n", "{reason=\"authority_mismatch\"} 1\n"}) {
    CHECK_THAT(
        text, Catch::Contains(std::string("\nsettle_participant_signature_refusals_total") + line));
  }
}

TEST_CASE(
    "gRPC Trys come from the initiator's GrpcClient: signed with its own key, or accepted "
    "unsigned by policy",
    "[sdk][grpc][signing][tcc]") {
  testing::TempDir dir;
  const std::string initiator_pem = NewEd25519();
  InProcessSettled s([](app::ServerConfig& c) {
    c.grpc.enabled = true;
    c.signing_key = Signer(kSettledSecret);
  });
  auto client_of = [&](std::optional<signing::SigningKey> key) {
    auto client = GrpcClient::Create(
        "grpc://127.0.0.1:" + std::to_string(s.grpc_port()),
        GrpcClientOptions{
            .http_server = "http://127.0.0.1:" + std::to_string(s.port()) + "/api/settle",
            .signing_key = std::move(key)});
    REQUIRE(client);
    return std::move(*client);
  };
  TransOptions options;
  options.wait_result = true;
  auto run = [&](GrpcClient& client, GrpcBank& bank, const std::string& gid) {
    return RunTcc(client, gid, options, [&](Tcc& tcc) -> Status {
      auto tried = tcc.CallBranch("0", bank.Url("Try"), bank.Url("Confirm"), bank.Url("Cancel"));
      return tried ? Status::Ok() : tried.status();
    });
  };

  SECTION("the initiator's key for Try, settled's for phase 2") {
    GrpcBank bank(dir.File("bank.db"), SignedCalls{.keys = {Verifier(kSettledSecret)},
                                                   .try_policy = SignedCalls::TryPolicy::kTryKeys,
                                                   .try_keys = {Verifier(initiator_pem)}});
    auto signing_client = client_of(Signer(initiator_pem));
    auto outcome = run(*signing_client, bank, "grpc-tcc-signed");
    REQUIRE(outcome);
    CHECK(outcome->status == GlobalStatus::kSucceed);
    CHECK(bank.runs() == 2);  // try, confirm
    CHECK(bank.refusals() == 0);

    // Without the key, the Try is refused and the TCC rolls back with settled's signed cancel.
    const std::int64_t rows = bank.BarrierRows();
    auto unsigned_client = client_of(std::nullopt);
    auto refused = run(*unsigned_client, bank, "grpc-tcc-unsigned");
    REQUIRE(refused);
    CHECK(refused->status == GlobalStatus::kFailed);
    CHECK(bank.refusals() == 1);
    // The cancel was let through; the barrier skipped it (an empty rollback).
    CHECK(bank.runs() == 2);
    CHECK(bank.BarrierRows() > rows);
  }
  SECTION("unsigned Trys accepted, as DTM's SDKs send them; phase 2 still settled's alone") {
    GrpcBank bank(dir.File("bank.db"),
                  SignedCalls{.keys = {Verifier(kSettledSecret)},
                              .try_policy = SignedCalls::TryPolicy::kUnsigned});
    auto unsigned_client = client_of(std::nullopt);
    auto outcome = run(*unsigned_client, bank, "grpc-tcc-dtm");
    REQUIRE(outcome);
    CHECK(outcome->status == GlobalStatus::kSucceed);
    CHECK(bank.runs() == 2);
    CHECK(Refusal(Send(bank, {.method = "Confirm", .gid = "grpc-tcc-dtm", .op = "confirm"})) ==
          "signature: no signature-input");
    CHECK(bank.runs() == 2);
  }
}

// Attack 3 of issue 42 over gRPC: a Try sent ahead of the initiator's decides nothing when the
// bank requires settled's countersignature of the registration.
TEST_CASE("under kRegistered a gRPC Try runs only with settled's countersignature",
          "[sdk][grpc][signing][tcc][registered]") {
  testing::TempDir dir;
  InProcessSettled s([](app::ServerConfig& c) {
    c.grpc.enabled = true;
    c.signing_key = Signer(kSettledSecret);
  });
  auto created = GrpcClient::Create(
      "grpc://127.0.0.1:" + std::to_string(s.grpc_port()),
      GrpcClientOptions{.http_server =
                            "http://127.0.0.1:" + std::to_string(s.port()) + "/api/settle"});
  REQUIRE(created);
  GrpcClient& client = **created;
  GrpcBank bank(dir.File("bank.db"),
                SignedCalls{.keys = {Verifier(kSettledSecret)},
                            .try_policy = SignedCalls::TryPolicy::kRegistered});

  SECTION("the SDK's GrpcClient sends it: the TCC runs") {
    TransOptions options;
    options.wait_result = true;
    auto outcome = RunTcc(client, "grpc-registered-1", options, [&](Tcc& tcc) -> Status {
      auto tried = tcc.CallBranch("0", bank.Url("Try"), bank.Url("Confirm"), bank.Url("Cancel"));
      return tried ? Status::Ok() : tried.status();
    });
    REQUIRE(outcome);
    CHECK(outcome->status == GlobalStatus::kSucceed);
    CHECK(bank.runs() == 2);
    CHECK(bank.refusals() == 0);
  }
  SECTION("an HTTP Try registered over gRPC gets its countersignature as lowercase metadata") {
    REQUIRE(client.Send(GlobalOp::kPrepare,
                        GlobalCall{.gid = "grpc-registered-3", .trans_type = "tcc"}));
    const std::string http = "http://127.0.0.1:" + std::to_string(s.port());
    auto registered = client.RegisterBranch(BranchRegistration{
        .gid = "grpc-registered-3",
        .trans_type = "tcc",
        .branch_id = "01",
        .data = "5",
        .urls = {
            {"try", http + "/Try"}, {"confirm", http + "/Confirm"}, {"cancel", http + "/Cancel"}}});
    REQUIRE(registered);
    std::vector<std::string> names;
    for (const auto& [name, value] : registered->try_signature) names.push_back(name);
    std::sort(names.begin(), names.end());
    CHECK(names == std::vector<std::string>{"content-digest", "signature", "signature-input"});
    // And settled serves on.
    CHECK(client.NewGid());
  }
  SECTION("a Try without it, or with another message or branch, is refused") {
    TransOptions options;
    REQUIRE(client.Send(
        GlobalOp::kPrepare,
        GlobalCall{.gid = "grpc-registered-2", .trans_type = "tcc", .options = options}));
    auto registered =
        client.RegisterBranch(BranchRegistration{.gid = "grpc-registered-2",
                                                 .trans_type = "tcc",
                                                 .branch_id = "01",
                                                 .data = "5",
                                                 .urls = {{"try", bank.Url("Try")},
                                                          {"confirm", bank.Url("Confirm")},
                                                          {"cancel", bank.Url("Cancel")}}});
    REQUIRE(registered);
    REQUIRE(registered->try_signature.size() == 3);
    const auto countersigned = [&](RawCall call) {
      call.method = "Try";
      call.gid = "grpc-registered-2";
      call.trans_type = "tcc";
      call.op = "try";
      call.tamper = [&](grpc_unary::UnaryRequest& r) {
        std::erase_if(r.metadata, [](const auto& m) { return m.first == "dtm-dtm"; });
        for (const auto& [name, value] : registered->try_signature) {
          r.metadata.emplace_back(name, value);
        }
      };
      return Send(bank, call);
    };
    // The attacker's unsigned Try, with another amount.
    CHECK(Refusal(Send(bank, {.method = "Try",
                              .gid = "grpc-registered-2",
                              .trans_type = "tcc",
                              .op = "try",
                              .message = "50"})) == "signature: no signature-input");
    CHECK_THAT(Refusal(countersigned({.message = "50"})),
               Catch::Contains("content-digest does not match"));
    CHECK(bank.runs() == 0);
    CHECK(bank.BarrierRows() == 0);
    CHECK(countersigned({.message = "5"}).code == 0);
    CHECK(bank.runs() == 1);
  }
}

TEST_CASE("an XA action over gRPC is judged by the Try policy, its commit by settled's keys",
          "[sdk][grpc][signing][xa]") {
  testing::TempDir dir;
  const std::string initiator_pem = NewEd25519();
  const signing::SigningKey initiator = Signer(initiator_pem);
  const signing::SigningKey settled = Signer(kSettledSecret);
  GrpcBank bank(dir.File("bank.db"), SignedCalls{.keys = {Verifier(kSettledSecret)},
                                                 .try_policy = SignedCalls::TryPolicy::kTryKeys,
                                                 .try_keys = {Verifier(initiator_pem)}});
  // An XA's action and its commit reach the same method.
  const RawCall action{.method = "Xa",
                       .gid = "xa-1",
                       .trans_type = "xa",
                       .op = "action",
                       .message = "1",
                       .phase2_url = bank.Url("Xa")};
  RawCall by_initiator = action;
  by_initiator.key = &initiator;
  CHECK(Send(bank, by_initiator).code == 0);
  RawCall by_settled = action;
  by_settled.gid = "xa-2";
  by_settled.key = &settled;
  CHECK_THAT(Refusal(Send(bank, by_settled)), Catch::Contains("unknown keyid"));
  // The commit is settled's alone.
  RawCall commit{.method = "Xa", .gid = "xa-1", .trans_type = "xa", .op = "commit", .message = "1"};
  commit.key = &initiator;
  CHECK_THAT(Refusal(Send(bank, commit)), Catch::Contains("unknown keyid"));
  commit.key = &settled;
  CHECK(Send(bank, commit).code == 0);
  CHECK(bank.refusals() == 2);
  CHECK(bank.runs() == 2);
  // The XA method takes XA calls only, refused as other bad metadata is: ABORTED, naming it.
  // A call that is no XA action is no initiator's either: settled's key gets it that far.
  RawCall saga_action = by_settled;
  saga_action.gid = "xa-3";
  saga_action.trans_type = "saga";
  const grpc_unary::UnaryAnswer not_xa = Send(bank, saga_action);
  CHECK(not_xa.code == 10);  // ABORTED
  CHECK(not_xa.message == "dtm-trans_type: this method takes xa");
  RawCall no_phase2 = by_settled;
  no_phase2.gid = "xa-4";
  no_phase2.phase2_url.clear();
  const grpc_unary::UnaryAnswer without = Send(bank, no_phase2);
  CHECK(without.code == 10);
  CHECK(without.message == "dtm-phase2_url: required for an XA action");
  CHECK(bank.runs() == 2);
}

}  // namespace
}  // namespace settle::sdk

namespace settle::sdk {
namespace {

// Only an OnXa method takes an XA action as the initiator's, only an OnTry or OnBranch method a
// Try: whatever the call's metadata claims, a saga action's method hears only settled.
TEST_CASE("an unsigned call claiming to be an XA action or a Try on a saga method is refused",
          "[sdk][grpc][signing][xa]") {
  testing::TempDir dir;
  GrpcBank bank(dir.File("bank.db"), SignedCalls{.keys = {Verifier(kSettledSecret)},
                                                 .try_policy = SignedCalls::TryPolicy::kUnsigned});
  // /bank.Bank/TransIn serves saga actions (OnAction): whatever the caller says it is, its
  // calls are settled's, so an unsigned one is refused.
  CHECK(Refusal(Send(bank, {.gid = "forged-xa", .trans_type = "xa", .op = "action"})) ==
        "signature: no signature-input");
  // A forged Try on a method that serves no Try is not the initiator's either.
  CHECK(Refusal(Send(bank, {.gid = "forged-try", .trans_type = "tcc", .op = "try"})) ==
        "signature: no signature-input");
  CHECK(bank.refusals() == 2);
  CHECK(bank.runs() == 0);
  CHECK(bank.BarrierRows() == 0);
  CHECK(bank.Balance() == 1000);
}

// An unsigned back-check would write the barrier's "rollback" row for the message's gid: it is
// settled's call, whatever op it names.
TEST_CASE("an unsigned back-check is refused with UNAUTHENTICATED and writes no barrier row",
          "[sdk][grpc][signing][msg]") {
  testing::TempDir dir;
  GrpcBank bank(dir.File("bank.db"), SignedCalls{.keys = {Verifier(kSettledSecret)},
                                                 .try_policy = SignedCalls::TryPolicy::kUnsigned});
  for (const std::string op : {"msg", "try"}) {
    INFO("op " << op);
    CHECK(Refusal(Send(bank, {.method = "QueryPrepared",
                              .gid = "pending-1",
                              .trans_type = "msg",
                              .op = op,
                              .message = ""})) == "signature: no signature-input");
  }
  CHECK(bank.BarrierRows() == 0);
  const signing::SigningKey settled = Signer(kSettledSecret);
  const grpc_unary::UnaryAnswer checked = Send(bank, {.method = "QueryPrepared",
                                                      .gid = "pending-1",
                                                      .trans_type = "msg",
                                                      .op = "msg",
                                                      .message = "",
                                                      .key = &settled});
  CHECK(checked.code == 10);  // ABORTED: no local transaction committed, and now none will
  CHECK(bank.BarrierRows() == 1);
  CHECK(bank.refusals() == 2);
}

// A workflow's resume is settled's call: unsigned, it would run (and end) a workflow of the
// caller's choosing.
TEST_CASE("a workflow's resume over gRPC runs only with settled's signature",
          "[sdk][grpc][signing][workflow]") {
  testing::TempDir dir;
  GrpcBank bank(dir.File("bank.db"), SignedCalls{.keys = {Verifier(kSettledSecret)},
                                                 .try_policy = SignedCalls::TryPolicy::kUnsigned});
  const RawCall resume{
      .method = "Resume", .gid = "wf-1", .trans_type = "workflow", .op = "order", .message = ""};
  CHECK(Refusal(Send(bank, resume)) == "signature: no signature-input");
  CHECK(bank.runs() == 0);
  const signing::SigningKey settled = Signer(kSettledSecret);
  RawCall signed_resume = resume;
  signed_resume.key = &settled;
  CHECK(Send(bank, signed_resume).code == 0);
  CHECK(bank.runs() == 1);
}

// A workflow's step calls come from its service, phase 2 included: over gRPC as over HTTP,
// never unsigned (though a TCC's Try may be, here), and signed by a workflow key when the
// participant names some.
TEST_CASE("a workflow's step call over gRPC runs only signed by a workflow key",
          "[sdk][grpc][signing][workflow]") {
  constexpr std::string_view kServiceSecret =
      "hmac:dGhlIHdvcmtmbG93IHNlcnZpY2UncyBvd24ga2V5IC4uLg==";
  testing::TempDir dir;
  GrpcBank bank(dir.File("bank.db"), SignedCalls{.keys = {Verifier(kSettledSecret)},
                                                 .try_policy = SignedCalls::TryPolicy::kUnsigned,
                                                 .workflow_keys = {Verifier(kServiceSecret)}});
  RawCall confirm{.method = "Confirm", .gid = "wf-1", .trans_type = "workflow", .op = "confirm"};
  CHECK(Refusal(Send(bank, confirm)) == "signature: no signature-input");
  RawCall try_call{.method = "Try", .gid = "wf-1", .trans_type = "workflow", .op = "try"};
  CHECK(Refusal(Send(bank, try_call)) == "signature: no signature-input");
  const signing::SigningKey settled = Signer(kSettledSecret);
  confirm.key = &settled;
  CHECK(Send(bank, confirm).code == 16);  // UNAUTHENTICATED: settled's key is not a workflow key
  CHECK(bank.runs() == 0);
  const signing::SigningKey service = Signer(kServiceSecret);
  try_call.key = &service;
  CHECK(Send(bank, try_call).code == 0);
  confirm.key = &service;
  CHECK(Send(bank, confirm).code == 0);
  CHECK(bank.runs() == 2);
  CHECK(bank.refusals() == 3);
}

TEST_CASE("Start refuses a client CA file that holds no PEM certificate, naming the option",
          "[sdk][grpc][mtls]") {
  testing::TempDir dir;
  testing::TestCa ca(dir.path());
  const testing::TestCa::Issued cert = ca.IssueForLocalhost();
  const std::string not_pem = dir.File("clients.pem");
  std::ofstream(not_pem) << "this is no certificate\n";
  GrpcBranchServer server(GrpcBranchServerOptions{.tls_cert_file = cert.cert_file,
                                                  .tls_key_file = cert.key_file,
                                                  .tls_client_ca_file = not_pem});
  const Result<int> started = server.Start("127.0.0.1", 0);
  REQUIRE_FALSE(started);
  CHECK(started.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(started.status().message(), Catch::StartsWith("tls_client_ca_file: "));
  CHECK_THAT(started.status().message(), Catch::Contains(not_pem));
}

// What `run` writes to stderr (fd 2), through a file.
std::string StderrOf(const std::function<void()>& run, const std::string& file) {
  std::fflush(stderr);
  const int saved = dup(2);
  REQUIRE(saved >= 0);
  std::FILE* out = std::fopen(file.c_str(), "w");
  REQUIRE(out != nullptr);
  REQUIRE(dup2(fileno(out), 2) >= 0);
  run();
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  std::fclose(out);
  std::ifstream in(file);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST_CASE("MountOn warns that its TLS options are the host server's to set, not its own",
          "[sdk][grpc][mtls]") {
  testing::TempDir dir;
  testing::TestCa ca(dir.path());
  const testing::TestCa::Issued cert = ca.IssueForLocalhost();
  SECTION("with TLS options") {
    GrpcBranchServer server(GrpcBranchServerOptions{.tls_cert_file = cert.cert_file,
                                                    .tls_key_file = cert.key_file,
                                                    .tls_client_ca_file = ca.ca_file()});
    grpc::ServerBuilder builder;
    const std::string said =
        StderrOf([&] { CHECK(server.MountOn(builder).ok()); }, dir.File("err"));
    CHECK_THAT(said, Catch::Contains("MountOn ignores tls_cert_file, tls_key_file and "
                                     "tls_client_ca_file"));
  }
  SECTION("without") {
    GrpcBranchServer server;
    grpc::ServerBuilder builder;
    CHECK(StderrOf([&] { CHECK(server.MountOn(builder).ok()); }, dir.File("err")).empty());
  }
}

}  // namespace
}  // namespace settle::sdk
