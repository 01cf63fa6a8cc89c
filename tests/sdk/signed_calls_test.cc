// Signed branch calls (docs/protocol.md §4.9), end to end: the settle of this process signs
// every call it makes with --signing-key's key, and the SDK's Participant, given the public
// key, runs only the calls it signed; everything else gets 401 before any handler runs.
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <sqlite3.h>

#include <catch2/catch.hpp>

#include <atomic>
#include <ctime>
#include <functional>
#include <optional>
#include <string>

#include "fake_clock.h"
#include "in_process_settled.h"
#include "sdk_bank.h"
#include "settle/net/blocking_client.h"
#include "settle/net/request_signing.h"
#include "settle/sdk/msg_barrier.h"
#include "settle/sdk/participant.h"
#include "settle/sdk/saga.h"
#include "settle/sdk/signature_refusals.h"
#include "settle/sdk/sqlite_barrier_store.h"
#include "settle/sdk/tcc.h"
#include "settle/sdk/workflow.h"
#include "temp_dir.h"
#include "test_ca.h"
#include "transfer_workflow.h"

namespace settle::sdk {
namespace {

using nlohmann::json;
using testing::InProcessSettled;

// The first value of header `name` in `headers` (any case), empty when absent.
std::string Get(const net::Headers& headers, std::string_view name) {
  const std::string* value = net::FindHeader(headers, name);
  return value != nullptr ? *value : std::string();
}

// A fresh Ed25519 key pair as PEM text: the private key, and its public half.
struct KeyPair {
  std::string private_pem;
  std::string public_pem;
};
KeyPair NewEd25519() {
  EVP_PKEY* key = EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519");
  REQUIRE(key != nullptr);
  auto write = [&](bool private_half) {
    BIO* bio = BIO_new(BIO_s_mem());
    const int ok = private_half
                       ? PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr)
                       : PEM_write_bio_PUBKEY(bio, key);
    REQUIRE(ok == 1);
    char* data = nullptr;
    const long size = BIO_get_mem_data(bio, &data);
    std::string text(data, static_cast<std::size_t>(size));
    BIO_free(bio);
    return text;
  };
  KeyPair pair{write(true), write(false)};
  EVP_PKEY_free(key);
  return pair;
}

signing::SigningKey Signer(const KeyPair& pair) {
  auto key = signing::SigningKey::FromText(pair.private_pem);
  REQUIRE(key);
  return *key;
}
signing::VerifyingKey Verifier(const std::string& text) {
  auto key = signing::VerifyingKey::FromText(text);
  REQUIRE(key);
  return *key;
}

// settled in this process, signing with `key`.
InProcessSettled SigningSettled(const signing::SigningKey& key) {
  return InProcessSettled([key](app::ServerConfig& c) { c.signing_key = key; });
}

// A participant whose every branch counts its runs and succeeds.
class Bank {
 public:
  explicit Bank(SignedCalls policy, int port = 0)
      : participant_(
            ParticipantOptions{.threads = 4, .io_threads = 1, .signed_calls = std::move(policy)}) {
    for (const char* path : {"/api/TransOut", "/api/TransOutRevert", "/api/TransIn",
                             "/api/TransInRevert", "/api/Try", "/api/Confirm", "/api/Cancel"}) {
      participant_.OnBranch(path, [this](const BranchRequest&) {
        runs_.fetch_add(1);
        return BranchReply::Success();
      });
    }
    participant_.OnResume("/api/Resume", [this](const ResumeRequest&) {
      runs_.fetch_add(1);
      return BranchReply::Success();
    });
    auto bound = participant_.Start("127.0.0.1", port);
    REQUIRE(bound);
    port_ = *bound;
  }
  std::string Url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }
  int port() const { return port_; }
  int runs() const { return runs_.load(); }
  std::uint64_t refusals() const { return participant_.signature_refusals(); }
  SignatureRefusalCounts refusal_counts() const { return participant_.signature_refusal_counts(); }
  void Stop() { participant_.Stop(); }

 private:
  std::atomic<int> runs_{0};
  Participant participant_;
  int port_ = 0;
};

std::unique_ptr<Client> ClientOf(const InProcessSettled& s, ClientOptions options = {}) {
  auto client =
      Client::Create("http://127.0.0.1:" + std::to_string(s.port()) + "/api/settle", options);
  REQUIRE(client);
  return std::move(*client);
}

// POSTs `body` to `url` as anyone could, with `headers`; the answer.
net::ClientAnswer Post(const std::string& url, const std::string& body,
                       const signing::SigningKey* key = nullptr, const std::string& send_to = "") {
  auto client = net::BlockingClient::Create({});
  REQUIRE(client);
  net::ClientRequest request;
  request.method = "POST";
  auto parsed = ParseUrl(url);
  REQUIRE(parsed);
  request.target = parsed->path_and_query;
  request.url = *parsed;
  request.body = body;
  request.timeout = std::chrono::seconds(10);
  if (key != nullptr) REQUIRE(net::SignRequest(request, *key, std::time(nullptr)).ok());
  if (!send_to.empty()) request.target = send_to;  // the signature was made for another target
  auto answer = (*client)->Send(std::move(request));
  REQUIRE(answer);
  return *answer;
}

TEST_CASE("settled signs its calls, and a participant that requires signatures runs them",
          "[sdk][signing]") {
  const KeyPair settled_key = NewEd25519();
  InProcessSettled s = SigningSettled(Signer(settled_key));
  Bank bank(SignedCalls{.keys = {Verifier(settled_key.public_pem)}});
  auto client = ClientOf(s);

  Saga saga(*client, "signed-saga");
  saga.Add(bank.Url("/api/TransOut"), bank.Url("/api/TransOutRevert"), R"({"amount":30})")
      .Add(bank.Url("/api/TransIn"), bank.Url("/api/TransInRevert"), R"({"amount":30})");
  saga.options().wait_result = true;
  auto outcome = saga.Submit();
  REQUIRE(outcome);
  CHECK(outcome->status == GlobalStatus::kSucceed);
  CHECK(bank.runs() == 2);
  CHECK(bank.refusals() == 0);
}

TEST_CASE("a forged or replayed call is refused with 401 before any handler runs",
          "[sdk][signing]") {
  const KeyPair settled_key = NewEd25519();
  Bank bank(SignedCalls{.keys = {Verifier(settled_key.public_pem)}});
  const std::string target = "/api/TransIn?gid=forged-1&trans_type=saga&branch_id=01&op=action";

  SECTION("unsigned, as the issue's curl sends it") {
    const auto answer = Post(bank.Url(target), R"({"account_id":"1","amount":1000000})");
    CHECK(answer.status == 401);
    CHECK_THAT(answer.body, Catch::Contains("signature: no Signature-Input"));
  }
  SECTION("signed by a key the participant does not trust") {
    const signing::SigningKey stranger = Signer(NewEd25519());
    const auto answer = Post(bank.Url(target), "{}", &stranger);
    CHECK(answer.status == 401);
    CHECK_THAT(answer.body, Catch::Contains("unknown keyid"));
  }
  SECTION("settled's signature of one call, replayed to another branch") {
    const signing::SigningKey settled = Signer(settled_key);
    const auto answer = Post(bank.Url(target), "{}", &settled,
                             "/api/TransOut?gid=forged-1&trans_type=saga&branch_id=01&op=action");
    CHECK(answer.status == 401);
    CHECK_THAT(answer.body, Catch::Contains("signature: "));
  }
  CHECK(bank.runs() == 0);
  CHECK(bank.refusals() == 1);
  // Nothing the coordinator could read as a verdict.
  const auto answer = Post(bank.Url(target), "{}");
  CHECK(answer.body.find("FAILURE") == std::string::npos);
  CHECK(answer.body.find("ONGOING") == std::string::npos);
}

// A workflow's resume is settled's call: unsigned, it would run (and end) a workflow of the
// caller's choosing.
TEST_CASE("a workflow's resume runs only with settled's signature", "[sdk][signing][workflow]") {
  const KeyPair settled_key = NewEd25519();
  Bank bank(SignedCalls{.keys = {Verifier(settled_key.public_pem)}});
  const std::string target = "/api/Resume?gid=wf-1&trans_type=workflow&branch_id=00&op=order";
  const auto unsigned_call = Post(bank.Url(target), "input");
  CHECK(unsigned_call.status == 401);
  CHECK_THAT(unsigned_call.body, Catch::Contains("signature: no Signature-Input"));
  CHECK(bank.runs() == 0);
  const signing::SigningKey settled = Signer(settled_key);
  CHECK(Post(bank.Url(target), "input", &settled).status == 200);
  CHECK(bank.runs() == 1);
}

// A workflow's service calls its steps itself, phase 2 included (settled signs none of them):
// a participant admits them signed by the workflow keys it trusts, and never unsigned, whatever
// its Try policy, since such a call may confirm. Judged by the money.
TEST_CASE("a workflow's step calls run only signed by a workflow key the participant trusts",
          "[sdk][signing][workflow]") {
  const KeyPair settled_key = NewEd25519();
  const KeyPair service_key = NewEd25519();
  const signing::SigningKey settled = Signer(settled_key);
  const signing::SigningKey service = Signer(service_key);
  InProcessSettled s = SigningSettled(settled);
  testing::TempDir dir;
  testing::SdkBank bank(
      dir.File("bank.db"), 3, 100,
      ParticipantOptions{
          .threads = 4,
          .io_threads = 1,
          .signed_calls = SignedCalls{.keys = {Verifier(settled_key.public_pem)},
                                      .try_policy = SignedCalls::TryPolicy::kUnsigned,
                                      .workflow_keys = {Verifier(service_key.public_pem)}}});
  testing::Transfer transfer{.out_body = R"({"account_id":"1","amount":30})",
                             .second_body = R"({"account_id":"2","amount":30})",
                             .bank = &bank};
  auto workflows_on = [&](Client& client) {
    auto workflows = std::make_unique<Workflows>(
        client, WorkflowsOptions{.resume_url = "http://127.0.0.1:1/resume"});
    REQUIRE(testing::RegisterTransfer(*workflows, &transfer).ok());
    return workflows;
  };

  // Without the service's key the first Try is refused before the barrier: the run stops
  // (nothing recorded, the workflow waits for a resume), and no money moves.
  auto unsigned_client = ClientOf(s);
  auto unsigned_service = workflows_on(*unsigned_client);
  Result<std::string> refused = unsigned_service->Execute("transfer", "wf-signed", "");
  REQUIRE_FALSE(refused);
  CHECK(refused.status().code() == StatusCode::kUnavailable);
  CHECK(bank.participant().signature_refusals() == 1);
  CHECK(bank.Balance("1") == 100);
  CHECK(bank.Frozen("1") == 0);
  CHECK(bank.BarrierRows() == 0);

  // The service signing with its key runs the same workflow to its end: Trys and Confirms.
  auto signing_client = ClientOf(s, ClientOptions{.signing_key = service});
  auto signing_service = workflows_on(*signing_client);
  Result<std::string> done = signing_service->Execute("transfer", "wf-signed", "");
  REQUIRE(done);
  CHECK(bank.Balance("1") == 70);
  CHECK(bank.Balance("2") == 130);
  CHECK(bank.BarrierRows() == 4);

  // A workflow's confirm is nobody else's to send: unsigned (though Trys may come unsigned
  // here), signed by settled's key, or by a stranger's, it is refused, and an honest TCC's
  // frozen money stays frozen.
  const std::string body = R"({"account_id":"3","amount":50})";
  REQUIRE(Post(bank.Url("/TransOutTry?gid=held&trans_type=tcc&branch_id=01&op=try"), body).status ==
          200);
  REQUIRE(bank.Frozen("3") == 50);
  const std::string confirm =
      "/TransOutConfirm?gid=wf-forged&trans_type=workflow&branch_id=01&op=confirm";
  CHECK(Post(bank.Url(confirm), body).status == 401);
  CHECK(Post(bank.Url(confirm), body, &settled).status == 401);
  const signing::SigningKey stranger = Signer(NewEd25519());
  CHECK(Post(bank.Url(confirm), body, &stranger).status == 401);
  // Nor is its Try let through unsigned as a TCC's is.
  CHECK(Post(bank.Url("/TransOutTry?gid=wf-forged&trans_type=workflow&branch_id=01&op=try"), body)
            .status == 401);
  CHECK(bank.Frozen("3") == 50);
  CHECK(bank.Balance("3") == 50);
  CHECK(bank.participant().signature_refusals() == 5);
}

// Without workflow keys, a workflow's step calls need settled's key (a service holding it): an
// initiator's Try key, trusted with Trys and XA actions, does not reach phase 2 this way.
TEST_CASE("without workflow keys a step signed by a Try key is refused",
          "[sdk][signing][workflow]") {
  const KeyPair settled_key = NewEd25519();
  const KeyPair initiator_key = NewEd25519();
  Bank bank(SignedCalls{.keys = {Verifier(settled_key.public_pem)},
                        .try_policy = SignedCalls::TryPolicy::kTryKeys,
                        .try_keys = {Verifier(initiator_key.public_pem)}});
  const signing::SigningKey initiator = Signer(initiator_key);
  const signing::SigningKey settled = Signer(settled_key);
  const std::string commit = "/api/Confirm?gid=wf-2&trans_type=workflow&branch_id=01&op=commit";
  CHECK(Post(bank.Url(commit), "{}", &initiator).status == 401);
  CHECK(bank.runs() == 0);
  // The same key is good for a TCC's Try.
  CHECK(Post(bank.Url("/api/Try?gid=t-2&trans_type=tcc&branch_id=01&op=try"), "{}", &initiator)
            .status == 200);
  CHECK(bank.runs() == 1);
  CHECK(Post(bank.Url(commit), "{}", &settled).status == 200);
  CHECK(bank.runs() == 2);
}

// Every way a call can fail its signature, over HTTP and over HTTPS, against a bank whose
// handlers run under the barrier on SQLite: each is a 401 naming the reason, and neither the
// barrier nor the accounts see it. The participant's clock is a fake one, so that the window's
// edge is exact: 60 s either way is in, 61 s out.
TEST_CASE("every refused call, over HTTP and HTTPS, leaves the barrier and the accounts untouched",
          "[sdk][signing]") {
  const bool https = GENERATE(false, true);
  INFO((https ? "HTTPS" : "HTTP"));
  testing::TempDir dir;
  std::optional<testing::TestCa> ca;
  ParticipantOptions options{.threads = 2, .io_threads = 1};
  if (https) {
    ca.emplace(dir.path());
    const testing::TestCa::Issued cert = ca->IssueForLocalhost();
    options.tls_cert_file = cert.cert_file;
    options.tls_key_file = cert.key_file;
  }
  testing::FakeClock clock;
  const KeyPair old_key = NewEd25519();
  const KeyPair new_key = NewEd25519();  // rotation: both trusted
  options.signed_calls =
      SignedCalls{.keys = {Verifier(old_key.public_pem), Verifier(new_key.public_pem)},
                  .window = std::chrono::seconds(60)};
  options.clock = &clock;
  testing::SdkBank bank(dir.File("bank.db"), 2, 1000, options);
  const std::int64_t now = ToUnixMillis(clock.Now()) / 1000;

  auto client = net::BlockingClient::Create({.ca_file = https ? ca->ca_file() : ""});
  REQUIRE(client);
  // Sends `body` to the bank's `target`, signed with `key` (none: unsigned) as created at
  // `created`, after `tamper` changed the request the signature was made for.
  auto send = [&](const std::string& target, const std::string& body,
                  const signing::SigningKey* key, std::int64_t created,
                  const std::function<void(net::ClientRequest&)>& tamper = {}) {
    net::ClientRequest request;
    request.method = "POST";
    auto url = ParseUrl(bank.Url(target));
    REQUIRE(url);
    request.url = *url;
    request.target = url->path_and_query;
    request.body = body;
    request.timeout = std::chrono::seconds(10);
    if (key != nullptr) REQUIRE(net::SignRequest(request, *key, created).ok());
    if (tamper) tamper(request);
    auto answer = (*client)->Send(std::move(request));
    REQUIRE(answer);
    return *answer;
  };
  const signing::SigningKey settled = Signer(old_key);
  const signing::SigningKey stranger = Signer(NewEd25519());
  const std::string target = "/TransIn?gid=forged-1&trans_type=saga&branch_id=01&op=action";
  const std::string body = R"({"account_id":"1","amount":1000000})";

  struct Refusal {
    std::string what;
    net::ClientAnswer answer;
    std::string reason;
  };
  const std::vector<Refusal> refusals = {
      {"unsigned", send(target, body, nullptr, now), "no Signature-Input"},
      {"an unknown key", send(target, body, &stranger, now), "unknown keyid"},
      {"a wrong signature",
       send(target, body, &settled, now,
            [](net::ClientRequest& r) {
              for (auto& [name, value] : r.headers) {
                // One base64 digit of the signature's last byte changed ("...XY==:": X).
                if (name != "Signature") continue;
                char& digit = value[value.size() - 5];
                digit = digit == 'A' ? 'B' : 'A';
              }
            }),
       "does not verify"},
      {"another body",
       send(target, R"({"account_id":"1","amount":30})", &settled, now,
            [&](net::ClientRequest& r) { r.body = body; }),
       "Content-Digest does not match the body"},
      {"another target",
       send("/TransIn?gid=g1&trans_type=saga&branch_id=01&op=action", body, &settled, now,
            [&](net::ClientRequest& r) { r.target = target; }),
       "does not verify"},
      {"created 61 s ago", send(target, body, &settled, now - 61), "created"},
      {"created 61 s ahead", send(target, body, &settled, now + 61), "created"},
  };
  for (const Refusal& refusal : refusals) {
    INFO(refusal.what << ": " << refusal.answer.body);
    CHECK(refusal.answer.status == 401);
    CHECK_THAT(refusal.answer.body, Catch::Contains("signature: ") &&
                                        Catch::Contains(refusal.reason) &&
                                        !Catch::Contains("FAILURE") && !Catch::Contains("ONGOING"));
  }
  CHECK(bank.participant().signature_refusals() == refusals.size());
  CHECK(bank.BarrierRows() == 0);
  CHECK(bank.Balance("1") == 1000);

  // At the window's edges, with either key of the rotation: let through, and run once.
  const std::string transfer = R"({"account_id":"1","amount":30})";
  const signing::SigningKey rotated = Signer(new_key);
  CHECK(send("/TransIn?gid=edge-1&trans_type=saga&branch_id=01&op=action", transfer, &settled,
             now - 60)
            .status == 200);
  CHECK(send("/TransIn?gid=edge-2&trans_type=saga&branch_id=01&op=action", transfer, &rotated,
             now + 60)
            .status == 200);
  CHECK(bank.Balance("1") == 1060);
  CHECK(bank.BarrierRows() > 0);
}

TEST_CASE("while signing is turned on, unsigned calls pass and signed ones are still checked",
          "[sdk][signing]") {
  const KeyPair settled_key = NewEd25519();
  Bank bank(SignedCalls{.keys = {Verifier(settled_key.public_pem)}, .require_signature = false});
  const std::string target = "/api/TransIn?gid=g1&trans_type=saga&branch_id=01&op=action";
  CHECK(Post(bank.Url(target), "{}").status == 200);
  const signing::SigningKey settled = Signer(settled_key);
  CHECK(Post(bank.Url(target), "{}", &settled).status == 200);
  const signing::SigningKey stranger = Signer(NewEd25519());
  CHECK(Post(bank.Url(target), "{}", &stranger).status == 401);
  CHECK(bank.runs() == 2);
  CHECK(bank.refusals() == 1);
}

// What an operator reads to tell an attack from a misconfiguration: each refusal under its
// reason, every reason present, zeros included.
TEST_CASE("a participant counts its refusals by reason and exports them as Prometheus text",
          "[sdk][signing][metrics]") {
  const KeyPair settled_key = NewEd25519();
  Bank bank(SignedCalls{.keys = {Verifier(settled_key.public_pem)}});
  const signing::SigningKey settled = Signer(settled_key);
  const signing::SigningKey stranger = Signer(NewEd25519());
  auto client = net::BlockingClient::Create({});
  REQUIRE(client);
  const std::int64_t now = std::time(nullptr);
  // Sends a saga action to the bank, signed by `key` (none: unsigned) as created at `created`
  // with `headers`, after `tamper` changed what is sent; the answer's status.
  auto send = [&](const signing::SigningKey* key, std::int64_t created,
                  const std::function<void(net::ClientRequest&)>& tamper = {},
                  const net::Headers& headers = {}) {
    net::ClientRequest request;
    request.method = "POST";
    auto url = ParseUrl(bank.Url("/api/TransIn?gid=g1&trans_type=saga&branch_id=01&op=action"));
    REQUIRE(url);
    request.url = *url;
    request.target = url->path_and_query;
    request.headers = headers;
    request.body = R"({"amount":30})";
    request.timeout = std::chrono::seconds(10);
    if (key != nullptr) REQUIRE(net::SignRequest(request, *key, created).ok());
    if (tamper) tamper(request);
    auto answer = (*client)->Send(std::move(request));
    REQUIRE(answer);
    return answer->status;
  };

  CHECK(send(nullptr, now) == 401);
  CHECK(send(&stranger, now) == 401);
  // settled's clock an hour behind, then an hour ahead.
  CHECK(send(&settled, now - 3600) == 401);
  CHECK(send(&settled, now + 3600) == 401);
  CHECK(send(&settled, now, [](net::ClientRequest& r) { r.body = R"({"amount":1000000})"; }) ==
        401);
  CHECK(send(&settled, now, [](net::ClientRequest& r) {
          r.target = "/api/TransIn?gid=g2&trans_type=saga&branch_id=01&op=action";
        }) == 401);
  // Signed for the Host settled dialed, which a proxy rewrote and forwarded: signed for the
  // proxy's name (net::SignRequest signs the URL's host:port), sent to the bank's own address.
  CHECK(send(&settled, now, [&](net::ClientRequest& r) {
          const Url bank_url = r.url;
          r.url.host = "bank.example";
          r.url.port = 8081;
          REQUIRE(net::SignRequest(r, settled, now).ok());
          r.url = bank_url;
          r.headers.emplace_back("X-Forwarded-Host", "bank.example:8081");
        }) == 401);
  CHECK(bank.runs() == 0);

  using signing::RefusalKind;
  const SignatureRefusalCounts counts = bank.refusal_counts();
  CHECK(counts.of(RefusalKind::kUnsigned) == 1);
  CHECK(counts.of(RefusalKind::kMalformed) == 0);
  CHECK(counts.of(RefusalKind::kNotCovered) == 0);
  CHECK(counts.of(RefusalKind::kUnknownKey) == 1);
  CHECK(counts.of(RefusalKind::kWrongAlgorithm) == 0);
  CHECK(counts.of(RefusalKind::kOutsideWindow) == 2);
  CHECK(counts.of(RefusalKind::kDigestMismatch) == 1);
  CHECK(counts.of(RefusalKind::kBadSignature) == 1);
  CHECK(counts.of(RefusalKind::kAuthorityMismatch) == 1);
  CHECK(counts.total() == 7);
  CHECK(bank.refusals() == 7);
  CHECK(SignatureRefusalsText(counts) ==
        "# HELP settle_participant_signature_refusals_total Branch calls refused for their "
        "signature, by reason (docs/operations.md, Signed calls to participants).\n"
        "# TYPE settle_participant_signature_refusals_total counter\n"
        "settle_participant_signature_refusals_total{reason=\"unsigned\"} 1\n"
        "settle_participant_signature_refusals_total{reason=\"malformed\"} 0\n"
        "settle_participant_signature_refusals_total{reason=\"not_covered\"} 0\n"
        "settle_participant_signature_refusals_total{reason=\"unknown_key\"} 1\n"
        "settle_participant_signature_refusals_total{reason=\"wrong_algorithm\"} 0\n"
        "settle_participant_signature_refusals_total{reason=\"outside_window\"} 2\n"
        "settle_participant_signature_refusals_total{reason=\"digest_mismatch\"} 1\n"
        "settle_participant_signature_refusals_total{reason=\"bad_signature\"} 1\n"
        "settle_participant_signature_refusals_total{reason=\"authority_mismatch\"} 1\n");
}

TEST_CASE(
    "a participant that refuses settled's key makes the call retry, saying why, until a "
    "rotation trusts it",
    "[sdk][signing]") {
  const KeyPair old_key = NewEd25519();
  const KeyPair new_key = NewEd25519();
  InProcessSettled s = SigningSettled(Signer(new_key));  // settled already signs with the new key
  auto bank = std::make_unique<Bank>(SignedCalls{.keys = {Verifier(old_key.public_pem)}});
  const int port = bank->port();
  auto client = ClientOf(s);

  Saga saga(*client, "rotated");
  saga.Add(bank->Url("/api/TransOut"), bank->Url("/api/TransOutRevert"), "{}");
  REQUIRE(saga.Submit());
  REQUIRE(s.WaitUntil("rotated", [](const json& q) {
    if (!q.is_object() || !q["branches"].is_array()) return false;
    for (const json& b : q["branches"]) {
      if (b.value("last_error", "")
              .find("the participant refuses settled's signature (key ed25519-") !=
          std::string::npos) {
        return true;
      }
    }
    return false;
  }));
  CHECK(s.StatusOf("rotated") == "submitted");
  CHECK(bank->runs() == 0);

  // The participant learns the new key beside the old one, on the same port: settled's next
  // retry goes through.
  bank->Stop();
  bank.reset();
  Bank rotated(SignedCalls{.keys = {Verifier(old_key.public_pem), Verifier(new_key.public_pem)}},
               port);
  REQUIRE(s.WaitForStatus("rotated", "succeed"));
  CHECK(rotated.runs() == 1);
}

TEST_CASE("Trys come from the initiator: signed with its own key, or accepted unsigned by policy",
          "[sdk][signing][tcc]") {
  const KeyPair settled_key = NewEd25519();
  const KeyPair initiator_key = NewEd25519();
  InProcessSettled s = SigningSettled(Signer(settled_key));
  TransOptions options;
  options.wait_result = true;
  auto run = [&](Client& client, Bank& bank, const std::string& gid) {
    return RunTcc(client, gid, options, [&](Tcc& tcc) -> Status {
      auto tried = tcc.CallBranch("{}", bank.Url("/api/Try"), bank.Url("/api/Confirm"),
                                  bank.Url("/api/Cancel"));
      return tried ? Status::Ok() : tried.status();
    });
  };

  SECTION("the initiator's key for Try, settled's for phase 2") {
    Bank bank(SignedCalls{.keys = {Verifier(settled_key.public_pem)},
                          .try_policy = SignedCalls::TryPolicy::kTryKeys,
                          .try_keys = {Verifier(initiator_key.public_pem)}});
    auto client = ClientOf(s, ClientOptions{.signing_key = Signer(initiator_key)});
    auto outcome = run(*client, bank, "tcc-signed");
    REQUIRE(outcome);
    CHECK(outcome->status == GlobalStatus::kSucceed);
    CHECK(bank.runs() == 2);  // try, confirm
    CHECK(bank.refusals() == 0);

    // An initiator without the key: its Try is refused, nothing runs, the TCC rolls back
    // (the cancel, signed by settled, is let through).
    auto unsigned_client = ClientOf(s);
    auto refused = run(*unsigned_client, bank, "tcc-unsigned");
    REQUIRE(refused);
    CHECK(refused->status == GlobalStatus::kFailed);
    CHECK(bank.refusals() == 1);
    CHECK(bank.runs() == 3);  // + the cancel
  }
  SECTION("unsigned Trys accepted, as DTM's SDKs send them; phase 2 still settled's alone") {
    Bank bank(SignedCalls{.keys = {Verifier(settled_key.public_pem)},
                          .try_policy = SignedCalls::TryPolicy::kUnsigned});
    auto client = ClientOf(s);
    auto outcome = run(*client, bank, "tcc-dtm");
    REQUIRE(outcome);
    CHECK(outcome->status == GlobalStatus::kSucceed);
    CHECK(bank.runs() == 2);
    const auto forged_confirm =
        Post(bank.Url("/api/Confirm?gid=tcc-dtm&trans_type=tcc&branch_id=01&op=confirm"), "{}");
    CHECK(forged_confirm.status == 401);
    CHECK(bank.runs() == 2);
  }
}

// Whether a call is the initiator's is the route's to say, not the caller's: a Try only on a
// route that serves Trys, an XA action only on an OnXa route.
TEST_CASE("under kUnsigned only a route that serves Trys lets an unsigned Try through",
          "[sdk][signing][tcc]") {
  const KeyPair settled_key = NewEd25519();
  std::atomic<int> runs{0};
  const BranchHandler count = [&runs](const BranchRequest&) {
    runs.fetch_add(1);
    return BranchReply::Success();
  };
  Participant participant(ParticipantOptions{
      .threads = 2,
      .io_threads = 1,
      .signed_calls = SignedCalls{.keys = {Verifier(settled_key.public_pem)},
                                  .try_policy = SignedCalls::TryPolicy::kUnsigned}});
  participant.OnAction("/api/TransIn", count).OnBranch("/api/Any", count);
  auto port = participant.Start("127.0.0.1", 0);
  REQUIRE(port);
  const std::string base = "http://127.0.0.1:" + std::to_string(*port);

  // A saga action's URL hears only settled: a Try, or an XA action, sent there is refused
  // for its signature, not let through to be refused for its op.
  CHECK(Post(base + "/api/TransIn?gid=f1&trans_type=tcc&branch_id=01&op=try", "{}").status == 401);
  CHECK(Post(base + "/api/TransIn?gid=f2&trans_type=xa&branch_id=01&op=action", "{}").status ==
        401);
  // An XA action on a branch URL is no XA route's: settled's too.
  CHECK(Post(base + "/api/Any?gid=f3&trans_type=xa&branch_id=01&op=action", "{}").status == 401);
  CHECK(participant.signature_refusals() == 3);
  CHECK(runs.load() == 0);
  // A Try on a URL for any op is the initiator's, accepted unsigned by the policy.
  CHECK(Post(base + "/api/Any?gid=t1&trans_type=tcc&branch_id=01&op=try", "{}").status == 200);
  CHECK(runs.load() == 1);
}

// An XA action is registered only after it ran, so nothing countersigns it: under kRegistered
// it needs a key all the same (the initiator's try_keys, or settled's), never none.
TEST_CASE("under kRegistered an XA action is never let through unsigned", "[sdk][signing][xa]") {
  const KeyPair settled_key = NewEd25519();
  const signing::SigningKey settled = Signer(settled_key);
  std::atomic<int> runs{0};
  Participant participant(ParticipantOptions{
      .threads = 2,
      .io_threads = 1,
      .signed_calls = SignedCalls{.keys = {Verifier(settled_key.public_pem)},
                                  .try_policy = SignedCalls::TryPolicy::kRegistered}});
  participant.OnXa("/api/Xa", [&runs](const XaRequest&) {
    runs.fetch_add(1);
    return BranchReply::Success();
  });
  auto port = participant.Start("127.0.0.1", 0);
  REQUIRE(port);
  const std::string url = "http://127.0.0.1:" + std::to_string(*port) +
                          "/api/Xa?gid=x1&trans_type=xa&branch_id=01&op=action&phase2_url=" +
                          PercentEncode("http://127.0.0.1:" + std::to_string(*port) + "/api/Xa");
  CHECK(Post(url, "{}").status == 401);
  CHECK(runs.load() == 0);
  CHECK(Post(url, "{}", &settled).status == 200);
  CHECK(runs.load() == 1);
}

// A message's back-check is settled's call like any other: an unsigned one would write the
// barrier's "rollback" row, after which the message's local transaction can never commit.
TEST_CASE("a back-check that settled did not sign is refused with 401 and writes no barrier row",
          "[sdk][signing][msg]") {
  const KeyPair settled_key = NewEd25519();
  const signing::SigningKey settled = Signer(settled_key);
  testing::TempDir dir;
  auto store = SqliteBarrierStore::Open(dir.File("shop.db"));
  REQUIRE(store);
  SystemClock clock;
  Barrier barrier(**store, clock);
  const auto barrier_rows = [&] {
    auto tx = (*store)->Begin();
    REQUIRE(tx);
    sqlite3_stmt* stmt = nullptr;
    REQUIRE(sqlite3_prepare_v2(SqliteBarrierStore::Connection(**tx), "SELECT COUNT(*) FROM barrier",
                               -1, &stmt, nullptr) == SQLITE_OK);
    std::int64_t rows = -1;
    if (sqlite3_step(stmt) == SQLITE_ROW) rows = sqlite3_column_int64(stmt, 0);
    sqlite3_finalize(stmt);
    return rows;
  };
  Participant participant(
      ParticipantOptions{.threads = 2,
                         .io_threads = 1,
                         .signed_calls = SignedCalls{.keys = {Verifier(settled_key.public_pem)}}});
  participant.OnQueryPrepared("/api/QueryPrepared", barrier);
  auto port = participant.Start("127.0.0.1", 0);
  REQUIRE(port);
  const std::string url = "http://127.0.0.1:" + std::to_string(*port) +
                          "/api/QueryPrepared?gid=pending-1&trans_type=msg&branch_id=00&op=msg";

  const net::ClientAnswer forged = Post(url, "");
  CHECK(forged.status == 401);
  CHECK(forged.body.find("FAILURE") == std::string::npos);
  CHECK(participant.signature_refusals() == 1);
  CHECK(barrier_rows() == 0);
  // So the message's local transaction still commits, and settled's signed back-check says so.
  REQUIRE(RunMsgLocalTransaction(barrier, "pending-1", [](BarrierTransaction&) {
            return Status::Ok();
          }).ok());
  const net::ClientAnswer checked = Post(url, "", &settled);
  CHECK(checked.status == 200);
  CHECK(checked.body.find("SUCCESS") != std::string::npos);
  CHECK(participant.signature_refusals() == 1);
}

// Sends `body` to `url` with exactly `headers` beside the client's own (Host, unless given);
// the answer.
net::ClientAnswer SendWith(const std::string& url, const std::string& body,
                           const net::Headers& headers) {
  auto client = net::BlockingClient::Create({});
  REQUIRE(client);
  net::ClientRequest request;
  request.method = body.empty() ? "GET" : "POST";
  auto parsed = ParseUrl(url);
  REQUIRE(parsed);
  request.target = parsed->path_and_query;
  request.url = *parsed;
  request.headers = headers;
  request.body = body;
  request.timeout = std::chrono::seconds(10);
  auto answer = (*client)->Send(std::move(request));
  REQUIRE(answer);
  return *answer;
}

// `request` signed by `key` for `url`, as settled signs its calls; the fields added.
net::Headers SignedFor(const std::string& url, const std::string& body,
                       const signing::SigningKey& key) {
  net::ClientRequest request;
  request.method = body.empty() ? "GET" : "POST";
  auto parsed = ParseUrl(url);
  REQUIRE(parsed);
  request.url = *parsed;
  request.body = body;
  REQUIRE(net::SignRequest(request, key, std::time(nullptr)).ok());
  return request.headers;
}

// Attack 2 of issue 42: a call settled signed for one participant, replayed within the window
// to another that trusts the same key, keeping the first one's Host.
TEST_CASE("a call settled signed for one participant is refused by every other that trusts the key",
          "[sdk][signing][authority]") {
  const KeyPair settled_key = NewEd25519();
  const signing::SigningKey settled = Signer(settled_key);
  Bank c(SignedCalls{.keys = {Verifier(settled_key.public_pem)}});
  Bank b(SignedCalls{.keys = {Verifier(settled_key.public_pem)}});
  const std::string target = "/api/TransIn?gid=g1&trans_type=saga&branch_id=01&op=action";
  const std::string body = R"({"account_id":"3","amount":7})";
  const net::Headers for_c = SignedFor(c.Url(target), body, settled);

  // To B with C's Host, as the attack sent it; with B's own Host; with C's in X-Forwarded-Host.
  net::Headers with_c_host = for_c;
  with_c_host.emplace_back("Host", "127.0.0.1:" + std::to_string(c.port()));
  const net::ClientAnswer replayed = SendWith(b.Url(target), body, with_c_host);
  CHECK(replayed.status == 401);
  CHECK_THAT(replayed.body, Catch::Contains("signed for authority \\\"127.0.0.1:" +
                                            std::to_string(c.port()) + "\\\" (the call's Host)"));
  CHECK(SendWith(b.Url(target), body, for_c).status == 401);
  net::Headers forwarded = for_c;
  forwarded.emplace_back("X-Forwarded-Host", "127.0.0.1:" + std::to_string(c.port()));
  CHECK(SendWith(b.Url(target), body, forwarded).status == 401);
  CHECK(b.runs() == 0);
  CHECK(b.refusal_counts().of(signing::RefusalKind::kAuthorityMismatch) == 2);
  CHECK(b.refusal_counts().of(signing::RefusalKind::kBadSignature) == 1);
  // C, which it was signed for, runs it.
  CHECK(SendWith(c.Url(target), body, for_c).status == 200);
  CHECK(c.runs() == 1);
}

TEST_CASE("behind a proxy the participant's configured name is what a signature must name",
          "[sdk][signing][authority]") {
  const KeyPair settled_key = NewEd25519();
  const signing::SigningKey settled = Signer(settled_key);
  std::atomic<int> runs{0};
  Participant participant(
      ParticipantOptions{.threads = 2,
                         .io_threads = 1,
                         .signed_calls = SignedCalls{.keys = {Verifier(settled_key.public_pem)}},
                         .authorities = {"Bank.Example:8443"}});
  participant.OnAction("/api/TransIn", [&runs](const BranchRequest&) {
    runs.fetch_add(1);
    return BranchReply::Success();
  });
  auto port = participant.Start("127.0.0.1", 0);
  REQUIRE(port);
  CHECK(participant.authorities() == std::vector<std::string>{"bank.example:8443"});
  const std::string local = "http://127.0.0.1:" + std::to_string(*port) +
                            "/api/TransIn?gid=g1&trans_type=saga&branch_id=01&op=action";
  // settled dialed the public name; the proxy forwards to 127.0.0.1 with its own Host.
  net::Headers public_name = SignedFor(
      "https://bank.example:8443/api/TransIn?gid=g1&trans_type=saga&branch_id=01&op=action", "{}",
      settled);
  CHECK(SendWith(local, "{}", public_name).status == 200);
  CHECK(runs.load() == 1);
  // Signed for the address the participant listens on, which it was not told to answer to.
  CHECK(SendWith(local, "{}", SignedFor(local, "{}", settled)).status == 401);
  CHECK(participant.signature_refusal_counts().of(signing::RefusalKind::kAuthorityMismatch) == 1);
  CHECK(runs.load() == 1);
}

// Attack 3 of issue 42: an unsigned Try sent ahead of the initiator's, for a gid /all lists.
TEST_CASE("under kRegistered a Try runs only with settled's countersignature of its registration",
          "[sdk][signing][tcc][registered]") {
  const KeyPair settled_key = NewEd25519();
  InProcessSettled s = SigningSettled(Signer(settled_key));
  Bank bank(SignedCalls{.keys = {Verifier(settled_key.public_pem)},
                        .try_policy = SignedCalls::TryPolicy::kRegistered});
  auto client = ClientOf(s);
  TransOptions options;
  options.wait_result = true;

  SECTION("the SDK's initiator sends it: the TCC runs") {
    auto outcome = RunTcc(*client, "registered-1", options, [&](Tcc& tcc) -> Status {
      auto tried = tcc.CallBranch(R"({"amount":5})", bank.Url("/api/Try"), bank.Url("/api/Confirm"),
                                  bank.Url("/api/Cancel"));
      return tried ? Status::Ok() : tried.status();
    });
    REQUIRE(outcome);
    CHECK(outcome->status == GlobalStatus::kSucceed);
    CHECK(bank.runs() == 2);  // try, confirm
    CHECK(bank.refusals() == 0);
  }
  SECTION("a Try nobody registered, or one that is not the registered one, is refused") {
    REQUIRE(s.Call("prepare", {{"gid", "registered-2"}, {"trans_type", "tcc"}}).status == 200);
    const std::string try_url = bank.Url("/api/Try");
    const auto registered = s.Call("registerBranch", {{"gid", "registered-2"},
                                                      {"trans_type", "tcc"},
                                                      {"branch_id", "01"},
                                                      {"data", R"({"amount":5})"},
                                                      {"try", try_url},
                                                      {"confirm", bank.Url("/api/Confirm")},
                                                      {"cancel", bank.Url("/api/Cancel")}});
    REQUIRE(registered.status == 200);
    REQUIRE(registered.json["try_signature"].is_object());
    net::Headers countersigned;
    for (const auto& [name, value] : registered.json["try_signature"].items()) {
      countersigned.emplace_back(name, value.get<std::string>());
    }
    REQUIRE(countersigned.size() == 3);
    CHECK_THAT(Get(countersigned, "Signature-Input"), Catch::EndsWith(";tag=\"settle-try\""));
    const std::string query = "?gid=registered-2&trans_type=tcc&branch_id=01&op=try";

    // The attacker's unsigned Try, with another account and amount.
    const net::ClientAnswer unsigned_try = Post(try_url + query, R"({"amount":50})");
    CHECK(unsigned_try.status == 401);
    CHECK_THAT(unsigned_try.body, Catch::Contains("no Signature-Input"));
    // The countersignature with another body, for another branch, or at another participant.
    CHECK(SendWith(try_url + query, R"({"amount":50})", countersigned).status == 401);
    CHECK(SendWith(try_url + "?gid=registered-2&trans_type=tcc&branch_id=02&op=try",
                   R"({"amount":5})", countersigned)
              .status == 401);
    Bank other(SignedCalls{.keys = {Verifier(settled_key.public_pem)},
                           .try_policy = SignedCalls::TryPolicy::kRegistered});
    CHECK(SendWith(other.Url("/api/Try") + query, R"({"amount":5})", countersigned).status == 401);
    CHECK(other.runs() == 0);
    // settled's countersignature is a Try's alone: not a confirm.
    CHECK(SendWith(
              bank.Url("/api/Confirm") + "?gid=registered-2&trans_type=tcc&branch_id=01&op=confirm",
              R"({"amount":5})", countersigned)
              .status == 401);
    CHECK(bank.runs() == 0);
    using signing::RefusalKind;
    CHECK(bank.refusal_counts().of(RefusalKind::kUnsigned) == 1);
    CHECK(bank.refusal_counts().of(RefusalKind::kDigestMismatch) == 1);
    CHECK(bank.refusal_counts().of(RefusalKind::kBadSignature) == 1);
    CHECK(bank.refusal_counts().of(RefusalKind::kMalformed) == 1);
    // Nothing in the call names the authority it was signed for: a bad signature there.
    CHECK(other.refusal_counts().of(RefusalKind::kBadSignature) == 1);

    // The registered Try, as registered: it runs.
    CHECK(SendWith(try_url + query, R"({"amount":5})", countersigned).status == 200);
    CHECK(bank.runs() == 1);
  }
  SECTION("only the registration that stored the branch is countersigned") {
    REQUIRE(s.Call("prepare", {{"gid", "registered-3"}, {"trans_type", "tcc"}}).status == 200);
    auto register_with = [&](const std::string& data, const std::string& try_path) {
      return s.Call("registerBranch", {{"gid", "registered-3"},
                                       {"trans_type", "tcc"},
                                       {"branch_id", "01"},
                                       {"data", data},
                                       {"try", bank.Url(try_path)},
                                       {"confirm", bank.Url("/api/Confirm")},
                                       {"cancel", bank.Url("/api/Cancel")}});
    };
    const auto first = register_with(R"({"amount":5})", "/api/Try");
    REQUIRE(first.status == 200);
    REQUIRE(first.json.contains("try_signature"));
    // Repeats store nothing: with other data, or naming another Try (which another client
    // could), they are answered 200 without a countersignature.
    const auto other_data = register_with(R"({"amount":500})", "/api/Try");
    CHECK(other_data.status == 200);
    CHECK(other_data.json == json{{"dtm_result", "SUCCESS"}});
    const auto other_try = register_with(R"({"amount":5})", "/api/TransIn");
    CHECK(other_try.status == 200);
    CHECK(other_try.json == json{{"dtm_result", "SUCCESS"}});
    net::Headers countersigned;
    for (const auto& [name, value] : first.json["try_signature"].items()) {
      countersigned.emplace_back(name, value.get<std::string>());
    }
    const std::string query = "?gid=registered-3&trans_type=tcc&branch_id=01&op=try";
    CHECK(SendWith(bank.Url("/api/TransIn") + query, R"({"amount":5})", countersigned).status ==
          401);
    CHECK(SendWith(bank.Url("/api/Try") + query, R"({"amount":500})", countersigned).status == 401);
    CHECK(SendWith(bank.Url("/api/Try") + query, R"({"amount":5})", countersigned).status == 200);
    CHECK(bank.runs() == 1);
  }
  SECTION("a Try on another participant than its confirm and cancel is refused at registration") {
    REQUIRE(s.Call("prepare", {{"gid", "registered-5"}, {"trans_type", "tcc"}}).status == 200);
    Bank elsewhere(SignedCalls{.keys = {Verifier(settled_key.public_pem)},
                               .try_policy = SignedCalls::TryPolicy::kRegistered});
    const auto refused = s.Call("registerBranch", {{"gid", "registered-5"},
                                                   {"trans_type", "tcc"},
                                                   {"branch_id", "01"},
                                                   {"data", "{}"},
                                                   {"try", elsewhere.Url("/api/Try")},
                                                   {"confirm", bank.Url("/api/Confirm")},
                                                   {"cancel", bank.Url("/api/Cancel")}});
    CHECK(refused.status == 400);
    CHECK_THAT(refused.json["message"].get<std::string>(),
               Catch::StartsWith("try: must be on the participant of confirm and cancel"));
    CHECK(s.Query("registered-5")["branches"].empty());
  }
  SECTION("a registration without its Try, as DTM's SDKs send it, gets no countersignature") {
    REQUIRE(s.Call("prepare", {{"gid", "registered-4"}, {"trans_type", "tcc"}}).status == 200);
    const auto registered = s.Call("registerBranch", {{"gid", "registered-4"},
                                                      {"trans_type", "tcc"},
                                                      {"branch_id", "01"},
                                                      {"data", "{}"},
                                                      {"confirm", bank.Url("/api/Confirm")},
                                                      {"cancel", bank.Url("/api/Cancel")}});
    REQUIRE(registered.status == 200);
    CHECK(registered.json == json{{"dtm_result", "SUCCESS"}});
  }
}

TEST_CASE("settled without a signing key countersigns nothing, and a kRegistered Try is refused",
          "[sdk][signing][tcc][registered]") {
  const KeyPair settled_key = NewEd25519();
  InProcessSettled s;
  Bank bank(SignedCalls{.keys = {Verifier(settled_key.public_pem)},
                        .try_policy = SignedCalls::TryPolicy::kRegistered});
  auto client = ClientOf(s);
  TransOptions options;
  options.wait_result = true;
  auto outcome = RunTcc(*client, "unsigned-settled", options, [&](Tcc& tcc) -> Status {
    auto tried = tcc.CallBranch("{}", bank.Url("/api/Try"), bank.Url("/api/Confirm"),
                                bank.Url("/api/Cancel"));
    return tried ? Status::Ok() : tried.status();
  });
  REQUIRE(outcome);
  CHECK(outcome->status != GlobalStatus::kSucceed);
  CHECK(bank.refusal_counts().of(signing::RefusalKind::kUnsigned) >= 1);
}

}  // namespace
}  // namespace settle::sdk
