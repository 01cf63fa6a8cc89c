// Bodies of every size over HTTPS through the SDK and the real settled: the client's calls to
// settled and to a Try, settled's calls to the SDK's participant, the participant's long
// answers, and the participant's own routes serving and receiving large bodies. Each branch
// runs exactly once: an answer cut short would have been retried. (Over HTTPS a body over
// 16 KiB once went out as its head alone, either way.)
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "byte_pattern.h"
#include "sdk_test_support.h"
#include "settle/net/blocking_client.h"
#include "settle/sdk/participant.h"
#include "settle/sdk/saga.h"
#include "settle/sdk/tcc.h"
#include "settled_process.h"
#include "temp_dir.h"
#include "test_ca.h"

namespace settle::sdk {
namespace {

using settle::testing::FirstDifference;
using settle::testing::PatternText;
using settle::testing::SettledProcess;
using settle::testing::TempDir;
using settle::testing::TestCa;
using namespace settle::sdk::test;

constexpr std::size_t kNoDifference = std::string::npos;
constexpr std::size_t kMaxBody = 1 << 20;  // the participant's max_body_bytes (its default)

// The bodies each branch path received, in order.
class Received {
 public:
  void Add(const BranchRequest& request) {
    std::lock_guard lock(mu_);
    bodies_[request.path].push_back(request.body);
  }
  std::vector<std::string> At(const std::string& path) const {
    std::lock_guard lock(mu_);
    auto found = bodies_.find(path);
    return found == bodies_.end() ? std::vector<std::string>() : found->second;
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::vector<std::string>> bodies_;
};

// A SUCCESS answer of about `size` bytes, as a participant returning a receipt would send.
std::string Receipt(std::size_t size, std::uint64_t seed) {
  return R"({"dtm_result":"SUCCESS","receipt":")" + PatternText(size, seed) + "\"}";
}

TEST_CASE(
    "a TCC and a saga over HTTPS carry bodies of any size whole, the client's calls to settled "
    "and to the Try, settled's calls to the SDK's participant and its long answers",
    "[sdk][tls][process][bodies]") {
  TempDir dir;
  TestCa ca(dir.path());
  const TestCa::Issued cert = ca.IssueForLocalhost();
  Received received;
  const std::string try_receipt = Receipt(200'000, 1);
  ParticipantOptions options;
  options.threads = 4;
  options.io_threads = 2;
  options.tls_cert_file = cert.cert_file;
  options.tls_key_file = cert.key_file;
  Participant participant(options);
  participant.OnTry("/Try", [&](const BranchRequest& r) {
    received.Add(r);
    return BranchReply::Success(try_receipt);
  });
  // Every other branch answers a receipt of over 100 KB.
  const BranchHandler record = [&](const BranchRequest& r) {
    received.Add(r);
    return BranchReply::Success(Receipt(100'000 + r.body.size(), r.body.size()));
  };
  participant.OnConfirm("/Confirm", record)
      .OnCancel("/Cancel", record)
      .OnAction("/Action", record)
      .OnCompensate("/Compensate", record);
  auto port = participant.Start("127.0.0.1", 0);
  REQUIRE(port);
  const std::string base = "https://localhost:" + std::to_string(*port);

  SettledProcess settled(dir.File("settle.db"), {"--tls-cert", cert.cert_file, "--tls-key",
                                                 cert.key_file, "--ca-file", ca.ca_file()});
  ClientOptions client_options;
  client_options.ca_file = ca.ca_file();
  auto client = MakeClient("https://127.0.0.1:" + std::to_string(settled.port()) + "/api/settle",
                           client_options);
  TransOptions wait;
  wait.wait_result = true;

  // Two branches: registered with settled, tried by the client, confirmed by settled.
  const std::vector<std::string> tcc_bodies = {PatternText(16385, 2), PatternText(400'000, 3)};
  auto tcc = RunTcc(*client, "https-bodies-tcc", wait, [&](Tcc& t) {
    for (const std::string& body : tcc_bodies) {
      auto answer = t.CallBranch(body, base + "/Try", base + "/Confirm", base + "/Cancel");
      if (!answer) return answer.status();
      CHECK(FirstDifference(*answer, try_receipt) == kNoDifference);
    }
    return Status::Ok();
  });
  REQUIRE(tcc);
  CHECK(tcc->status == GlobalStatus::kSucceed);
  // Tries in order (the client calls them one by one); confirms in any order (settled calls
  // them at once).
  const std::vector<std::string> tries = received.At("/Try");
  REQUIRE(tries.size() == tcc_bodies.size());
  for (std::size_t i = 0; i < tries.size(); ++i) {
    CHECK(FirstDifference(tries[i], tcc_bodies[i]) == kNoDifference);
  }
  std::vector<std::string> confirms = received.At("/Confirm");
  REQUIRE(confirms.size() == tcc_bodies.size());
  std::sort(confirms.begin(), confirms.end(),
            [](const std::string& a, const std::string& b) { return a.size() < b.size(); });
  for (std::size_t i = 0; i < confirms.size(); ++i) {
    CHECK(FirstDifference(confirms[i], tcc_bodies[i]) == kNoDifference);
  }

  // A saga whose submit is over 300 KB.
  const std::vector<std::string> payloads = {PatternText(1, 4), PatternText(16384, 5),
                                             PatternText(16385, 6), PatternText(300'000, 7)};
  Saga saga(*client, "https-bodies-saga");
  for (const std::string& payload : payloads) {
    saga.Add(base + "/Action", base + "/Compensate", payload);
  }
  saga.options().wait_result = true;
  auto submitted = saga.Submit();
  REQUIRE(submitted);
  CHECK(submitted->status == GlobalStatus::kSucceed);
  const std::vector<std::string> actions = received.At("/Action");
  REQUIRE(actions.size() == payloads.size());  // in step order: the saga is sequential
  for (std::size_t i = 0; i < actions.size(); ++i) {
    INFO("step " << i);
    CHECK(FirstDifference(actions[i], payloads[i]) == kNoDifference);
  }
  CHECK(received.At("/Cancel").empty());
  CHECK(received.At("/Compensate").empty());
}

TEST_CASE(
    "the SDK's participant serves answers of any size on its own routes over HTTPS and takes "
    "bodies up to max_body_bytes whole, and one byte more gets 413",
    "[sdk][tls][bodies]") {
  TempDir dir;
  TestCa ca(dir.path());
  const TestCa::Issued cert = ca.IssueForLocalhost();
  ParticipantOptions options;
  options.threads = 2;
  options.io_threads = 2;
  options.tls_cert_file = cert.cert_file;
  options.tls_key_file = cert.key_file;
  Participant participant(options);
  participant.OnGet("/report", [](const HttpRequest& request) {
    const std::size_t size = std::stoull(request.params.find("size")->second);
    return HttpReply{.body = PatternText(size, size), .content_type = "text/plain"};
  });
  participant.OnPost("/upload", [](const HttpRequest& request) {
    return HttpReply{.body = request.body, .content_type = "text/plain"};
  });
  auto port = participant.Start("127.0.0.1", 0);
  REQUIRE(port);
  const std::string base = "https://localhost:" + std::to_string(*port);
  auto client = net::BlockingClient::Create({.ca_file = ca.ca_file()});
  REQUIRE(client);

  for (const std::size_t size :
       {std::size_t{1}, std::size_t{16383}, std::size_t{16384}, std::size_t{16385},
        std::size_t{65536}, std::size_t{(2 << 20) + 3}}) {
    INFO("answer of " << size << " bytes");
    net::ClientRequest request;
    request.url = *ParseUrl(base + "/report?size=" + std::to_string(size));
    Result<net::ClientAnswer> answer = (*client)->Send(request);
    REQUIRE(answer);
    CHECK(answer->status == 200);
    CHECK(answer->body_bytes == size);
    CHECK(FirstDifference(answer->body, PatternText(size, size)) == kNoDifference);
  }

  for (const std::size_t size : {std::size_t{1}, std::size_t{16385}, std::size_t{65536},
                                 kMaxBody - 1, kMaxBody, kMaxBody + 1, 4 * kMaxBody}) {
    INFO("body of " << size << " bytes");
    net::ClientRequest request;
    request.method = "POST";
    request.url = *ParseUrl(base + "/upload");
    request.body = PatternText(size, size + 9);
    Result<net::ClientAnswer> answer = (*client)->Send(request);
    INFO(answer.status().ToString());
    REQUIRE(answer);
    if (size > kMaxBody) {
      CHECK(answer->status == 413);
      CHECK_THAT(answer->body, Catch::Contains("larger than " + std::to_string(kMaxBody)));
    } else {
      CHECK(answer->status == 200);
      CHECK(FirstDifference(answer->body, request.body) == kNoDifference);
    }
  }
}

}  // namespace
}  // namespace settle::sdk
