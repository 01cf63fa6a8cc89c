// Issue 42, attack 1, as a regression with real processes, judged by the bank's balances: a
// client's saga whose action URL names the victim's gid, trans_type, branch_id and op (over gRPC:
// whose branch_headers name the victim's dtm-* words) once made settled send, and sign, the
// victim's confirm, and the bank ended with 310 of 300. Now settled refuses such a submit, and
// the bank (the SDK's participant) refuses a call that repeats a protocol key, as a coordinator
// older than that check would send it. settled --signing-key and bank-participant
// --coordinator-key, real sockets on 127.0.0.1, real database files.

#include <grpcpp/grpcpp.h>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "child_process.h"
#include "dtmgimp.grpc.pb.h"
#include "eventually.h"
#include "file_text.h"
#include "json_client.h"
#include "settle/core/clock.h"
#include "settle/core/file_text.h"
#include "settle/core/grpc_codes.h"
#include "settle/core/grpc_target.h"
#include "settle/grpc_unary/call_signing.h"
#include "settle/grpc_unary/unary_call.h"
#include "settle/net/blocking_client.h"
#include "settle/net/request_signing.h"
#include "settle/signing/request_signature.h"
#include "settled_process.h"
#include "temp_dir.h"

namespace settle {
namespace {

using google::protobuf::Empty;
using nlohmann::json;
using testing::ChildProcess;
using testing::JsonClient;
using testing::SettledProcess;
using testing::TempDir;

constexpr auto kWait = std::chrono::seconds(20);
const std::string kCredit = R"({"account_id":"2","amount":10})";

// settled's signing key, and its public half for the bank.
struct KeyFiles {
  explicit KeyFiles(const TempDir& dir)
      : private_key(dir.File("signing.pem")), public_key(dir.File("signing.pub")) {
    REQUIRE(std::system(
                ("openssl genpkey -algorithm ed25519 -out '" + private_key + "'").c_str()) == 0);
    REQUIRE(std::system(("openssl pkey -in '" + private_key + "' -pubout -out '" + public_key + "'")
                            .c_str()) == 0);
  }
  // What an older settled would sign with: the same key.
  signing::SigningKey Signing() const {
    auto text = ReadFileText(private_key);
    REQUIRE(text);
    auto key = signing::SigningKey::FromText(*text);
    REQUIRE(key);
    return *key;
  }
  std::string private_key;
  std::string public_key;
};

// The real settled, signing its calls, with its gRPC API on a port of its own.
struct Settled {
  Settled(TempDir& dir, const KeyFiles& keys)
      : started(dir.File("settle.db"),
                {"--signing-key", keys.private_key, "--retry-interval", "100ms"},
                dir.File("settled")),
        process(started.process),
        http(std::make_unique<JsonClient>(process->port())),
        grpc_port(started.grpc_port),
        dtm(dtmgimp::Dtm::NewStub(
            grpc::CreateChannel(started.GrpcAddress(), grpc::InsecureChannelCredentials()))) {}
  testing::JsonResponse Call(const std::string& route, const json& body) {
    return http->PostJson("/api/settle/" + route, body);
  }
  json Query(const std::string& gid) { return http->Get("/api/settle/query?gid=" + gid).json; }
  bool Stored(const std::string& gid) {
    const json q = Query(gid);
    return !q.is_object() || !q["transaction"].is_null();
  }
  std::string StatusOf(const std::string& gid) {
    const json q = Query(gid);
    if (!q.is_object() || !q["transaction"].is_object()) return "";
    return q["transaction"]["status"].get<std::string>();
  }
  bool WaitForStatus(const std::string& gid, const std::string& status) {
    return testing::Eventually([&] { return StatusOf(gid) == status; }, kWait);
  }

  testing::SettledWithGrpc started;
  std::unique_ptr<SettledProcess>& process;
  std::unique_ptr<JsonClient> http;
  int grpc_port = 0;
  std::unique_ptr<dtmgimp::Dtm::Stub> dtm;
};

// The bank example verifying settled's signatures, its branches over HTTP and gRPC; accounts
// 1..3 with 100 each.
struct Bank {
  Bank(TempDir& dir, const KeyFiles& keys)
      : process(
            {BANK_BINARY, "--port", "0", "--grpc-port", "0", "--db", dir.File("bank.db"),
             "--accounts", "3", "--initial-balance", "100", "--coordinator-key", keys.public_key},
            dir.File("bank.log")) {
    const std::string http_prefix = "bank-participant listening on ";
    const std::string line = process.WaitForLine(http_prefix, kWait);
    REQUIRE(line.rfind(http_prefix, 0) == 0);
    base = line.substr(http_prefix.size());
    const std::string grpc_prefix = "bank-participant gRPC branches on ";
    const std::string grpc_line = process.WaitForLine(grpc_prefix, kWait);
    REQUIRE(grpc_line.rfind(grpc_prefix, 0) == 0);
    grpc = grpc_line.substr(grpc_prefix.size());
    const std::size_t colon = base.rfind(':');
    client = std::make_unique<JsonClient>(std::stoi(base.substr(colon + 1)));
  }
  std::string Url(const std::string& path) const { return base + path; }
  std::string Method(const std::string& name) const { return grpc + "/bank.Bank/" + name; }
  long long Balance(const std::string& account) {
    const auto r = client->Get("/api/accounts/" + account);
    REQUIRE(r.status == 200);
    return r.json["balance"].get<long long>();
  }
  long long Total() { return Balance("1") + Balance("2") + Balance("3"); }

  ChildProcess process;
  std::string base;  // "http://127.0.0.1:PORT"
  std::string grpc;  // "127.0.0.1:PORT"
  std::unique_ptr<JsonClient> client;
};

// A POST to the bank signed with settled's key, through net::SignRequest as settled signs (with
// `tag` kRegisteredTryTag: as settled countersigns a registered Try).
net::ClientAnswer SignedPost(const KeyFiles& keys, const std::string& url_with_query,
                             const std::string& body, std::string_view tag = {}) {
  auto client = net::BlockingClient::Create();
  REQUIRE(client);
  net::ClientRequest request;
  request.method = "POST";
  auto url = ParseUrl(url_with_query);
  REQUIRE(url);
  request.url = *url;
  request.body = body;
  REQUIRE(
      net::SignRequest(request, keys.Signing(), ToUnixMillis(SystemClock().Now()) / 1000, true, tag)
          .ok());
  auto answer = (*client)->Send(std::move(request));
  REQUIRE(answer);
  return *answer;
}

// A POST to the bank with `headers` (settled's countersignature of a Try) beside its own.
net::ClientAnswer PostWith(const std::string& url_with_query, const std::string& body,
                           const net::Headers& headers) {
  auto client = net::BlockingClient::Create();
  REQUIRE(client);
  net::ClientRequest request;
  request.method = "POST";
  auto url = ParseUrl(url_with_query);
  REQUIRE(url);
  request.url = *url;
  request.body = body;
  request.headers = headers;
  auto answer = (*client)->Send(std::move(request));
  REQUIRE(answer);
  return *answer;
}

// A gRPC call of the bank's `method` with `metadata` in this order, signed with settled's key
// when `keys` is given, through grpc_unary::SignUnary as settled signs.
grpc_unary::UnaryAnswer GrpcCall(const std::string& method_url,
                                 std::vector<std::pair<std::string, std::string>> metadata,
                                 const KeyFiles* keys, std::string_view tag = {}) {
  auto target = ParseGrpcTarget(method_url);
  REQUIRE(target);
  grpc_unary::UnaryRequest request{.method = target->method,
                                   .metadata = std::move(metadata),
                                   .message = kCredit,
                                   .timeout = Duration(10000)};
  if (keys != nullptr) {
    REQUIRE(grpc_unary::SignUnary(request, *target, keys->Signing(),
                                  ToUnixMillis(SystemClock().Now()) / 1000, true, tag)
                .ok());
  }
  grpc_unary::ChannelPool channels;
  return grpc_unary::CallUnary(channels.To(*target), std::move(request));
}

std::vector<std::pair<std::string, std::string>> Words(const std::string& gid,
                                                       const std::string& trans_type,
                                                       const std::string& branch_id,
                                                       const std::string& op) {
  std::vector<std::pair<std::string, std::string>> metadata;
  grpc_unary::AddBranchMetadata(
      metadata,
      {.gid = gid, .trans_type = trans_type, .branch_id = branch_id, .op = op, .dtm = ""});
  return metadata;
}

TEST_CASE(
    "the malicious saga of issue 42 is refused and no money moves, and the bank refuses the "
    "query an older coordinator would have sent",
    "[process][protocol_keys][bank]") {
  TempDir dir;
  const KeyFiles keys(dir);
  Settled settled(dir, keys);
  Bank bank(dir, keys);

  // The victim's TCC: 10 to account 2, Tried (its credit pending), not yet decided. The Try
  // carries settled's countersignature of its registration, which the bank requires.
  REQUIRE(settled.Call("prepare", {{"gid", "victim"}, {"trans_type", "tcc"}}).status == 200);
  const auto registered =
      settled.Call("registerBranch", {{"gid", "victim"},
                                      {"trans_type", "tcc"},
                                      {"branch_id", "02"},
                                      {"data", kCredit},
                                      {"try", bank.Url("/api/TransInTry")},
                                      {"confirm", bank.Url("/api/TransInConfirm")},
                                      {"cancel", bank.Url("/api/TransInCancel")}});
  REQUIRE(registered.status == 200);
  net::Headers countersigned;
  for (const auto& [name, value] : registered.json["try_signature"].items()) {
    countersigned.emplace_back(name, value.get<std::string>());
  }
  REQUIRE(PostWith(bank.Url("/api/TransInTry?gid=victim&trans_type=tcc&branch_id=02&op=try"),
                   kCredit, countersigned)
              .status == 200);

  // The attack: a saga whose action is the victim's confirm, in the client's own words.
  const std::string victim_words = "?gid=victim&trans_type=tcc&branch_id=02&op=confirm";
  const auto refused = settled.Call(
      "submit", {{"gid", "evil"},
                 {"trans_type", "saga"},
                 {"steps", {{{"action", bank.Url("/api/TransInConfirm") + victim_words}}}},
                 {"payloads", {kCredit}},
                 {"wait_result", true}});
  CHECK(refused.status == 400);
  CHECK(refused.json["message"] ==
        "steps[0].action: the query names \"gid\", which settled sets itself (protocol.md §4.1)");
  CHECK_FALSE(settled.Stored("evil"));
  CHECK(bank.Balance("2") == 100);

  // What a coordinator without that check would send, signed with settled's key: the client's
  // words, then its own. The bank refuses it with 400 (retried, never FAILURE).
  const net::ClientAnswer older = SignedPost(keys,
                                             bank.Url("/api/TransInConfirm") + victim_words +
                                                 "&gid=evil&trans_type=saga&branch_id=01&op=action",
                                             kCredit);
  CHECK(older.status == 400);
  CHECK(older.body.find("gid: more than once in the query string") != std::string::npos);
  CHECK(older.body.find("FAILURE") == std::string::npos);
  CHECK(bank.Balance("2") == 100);

  // The victim aborts: its cancel drops the pending credit. 300 of 300.
  REQUIRE(settled.Call("abort", {{"gid", "victim"}, {"trans_type", "tcc"}}).status == 200);
  REQUIRE(settled.WaitForStatus("victim", "failed"));
  CHECK(bank.Balance("2") == 100);
  CHECK(bank.Total() == 300);

  // The confirm the older coordinator's call carried, sent alone and signed the same way, is run
  // by the bank: the refusal above was the repeat's. (A TCC of its own, Tried first, as settled
  // countersigns a Try.)
  REQUIRE(SignedPost(keys, bank.Url("/api/TransInTry?gid=ctl&trans_type=tcc&branch_id=01&op=try"),
                     kCredit, signing::kRegisteredTryTag)
              .status == 200);
  const net::ClientAnswer alone = SignedPost(
      keys, bank.Url("/api/TransInConfirm?gid=ctl&trans_type=tcc&branch_id=01&op=confirm"),
      kCredit);
  CHECK(alone.status == 200);
  CHECK(bank.Balance("2") == 110);
}

TEST_CASE(
    "over gRPC, the attack with dtm-* branch_headers is refused and no money moves, and the "
    "bank refuses dtm-* metadata that arrives twice",
    "[process][protocol_keys][bank][grpc]") {
  TempDir dir;
  const KeyFiles keys(dir);
  Settled settled(dir, keys);
  Bank bank(dir, keys);

  // The victim's TCC over settled's gRPC API: 10 to account 2 at the bank's gRPC methods, Tried.
  grpc::ClientContext prepare_ctx;
  dtmgimp::DtmRequest prepare;
  prepare.set_gid("victim-g");
  prepare.set_transtype("tcc");
  Empty empty;
  REQUIRE(settled.dtm->Prepare(&prepare_ctx, prepare, &empty).ok());
  grpc::ClientContext register_ctx;
  dtmgimp::DtmBranchRequest branch;
  branch.set_gid("victim-g");
  branch.set_transtype("tcc");
  branch.set_branchid("02");
  branch.set_busipayload(kCredit);
  (*branch.mutable_data())["try"] = bank.Method("TransInTry");
  (*branch.mutable_data())["confirm"] = bank.Method("TransInConfirm");
  (*branch.mutable_data())["cancel"] = bank.Method("TransInCancel");
  REQUIRE(settled.dtm->RegisterBranch(&register_ctx, branch, &empty).ok());
  // The Try with settled's countersignature, which the registration answered as metadata.
  auto try_words = Words("victim-g", "tcc", "02", "try");
  std::erase_if(try_words, [](const auto& m) { return m.first == "dtm-dtm"; });
  for (const auto& [key, value] : register_ctx.GetServerInitialMetadata()) {
    const std::string name(key.data(), key.size());
    if (name.starts_with("settle-try-")) {
      try_words.emplace_back(name.substr(11), std::string(value.data(), value.size()));
    }
  }
  REQUIRE(try_words.size() == 7);
  REQUIRE(GrpcCall(bank.Method("TransInTry"), try_words, nullptr).code == 0);

  // The attack over gRPC: the victim's words as branch_headers, which would travel ahead of
  // settled's own dtm-* metadata.
  grpc::ClientContext submit_ctx;
  dtmgimp::DtmRequest saga;
  saga.set_gid("evil-g");
  saga.set_transtype("saga");
  saga.set_steps(json({{{"action", bank.Method("TransInConfirm")}}}).dump());
  saga.add_binpayloads(kCredit);
  auto& headers = *saga.mutable_transoptions()->mutable_branchheaders();
  headers["dtm-gid"] = "victim-g";
  headers["dtm-trans_type"] = "tcc";
  headers["dtm-branch_id"] = "02";
  headers["dtm-op"] = "confirm";
  const grpc::Status refused = settled.dtm->Submit(&submit_ctx, saga, &empty);
  CHECK(refused.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK_THAT(refused.error_message(),
             Catch::StartsWith("TransOptions.BranchHeaders.dtm-branch_id: a header settled sets "
                               "itself"));
  CHECK_FALSE(settled.Stored("evil-g"));
  CHECK(bank.Balance("2") == 100);

  // What a coordinator without that check would send, signed with settled's key: the client's
  // dtm-* headers, then its own. The bank refuses it with INVALID_ARGUMENT (retried, never
  // FAILURE).
  auto older = Words("victim-g", "tcc", "02", "confirm");
  for (auto& word : Words("evil-g", "saga", "01", "action")) older.push_back(word);
  const grpc_unary::UnaryAnswer answer = GrpcCall(bank.Method("TransInConfirm"), older, &keys);
  CHECK(answer.code == static_cast<int>(GrpcCode::kInvalidArgument));
  CHECK(answer.message.find("more than once in the call's metadata") != std::string::npos);
  CHECK(bank.Balance("2") == 100);

  // The victim aborts: 300 of 300.
  REQUIRE(settled.Call("abort", {{"gid", "victim-g"}, {"trans_type", "tcc"}}).status == 200);
  REQUIRE(settled.WaitForStatus("victim-g", "failed"));
  CHECK(bank.Balance("2") == 100);
  CHECK(bank.Total() == 300);

  // The same confirm sent once, signed the same way, is run: the refusal was the repeat's.
  REQUIRE(GrpcCall(bank.Method("TransInTry"), Words("ctl-g", "tcc", "01", "try"), &keys,
                   signing::kRegisteredTryTag)
              .code == 0);
  CHECK(
      GrpcCall(bank.Method("TransInConfirm"), Words("ctl-g", "tcc", "01", "confirm"), &keys).code ==
      0);
  CHECK(bank.Balance("2") == 110);
}

}  // namespace
}  // namespace settle
