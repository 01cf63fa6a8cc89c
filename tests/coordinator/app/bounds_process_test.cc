// The real settled against the clients of issue 43's attacks 4 to 6 (docs/operations.md,
// "Hostile clients"): a TCC's payloads read back in pages within --max-answer-bytes, byte for
// byte, and settled's memory after three large readers at once; a thousand participant hosts
// in at most --max-hosts gates and metric series; a caller over --rate-limit answered 429 with
// Retry-After, and served again; a timeout_to_fail over --max-timeout-to-fail and a
// request_timeout over --max-branch-timeout refused, over HTTP and gRPC.
#include <grpcpp/grpcpp.h>

#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "byte_pattern.h"
#include "dtmgimp.grpc.pb.h"
#include "eventually.h"
#include "json_client.h"
#include "participant_server.h"
#include "resident_memory.h"
#include "settle/sdk/client.h"
#include "settled_process.h"
#include "temp_dir.h"

namespace settle {
namespace {

using nlohmann::json;
using std::chrono::seconds;
using testing::Eventually;
using testing::JsonClient;
using testing::JsonResponse;
using testing::PatternText;
using testing::ResidentKiB;
using testing::SettledProcess;

// A TCC `gid`, prepared, with `branches` branches registered whose bodies are `bytes` long,
// each its own; answers the bodies by branch_id.
std::map<std::string, std::string> RegisterTcc(JsonClient& client, const std::string& gid,
                                               int branches, std::size_t bytes) {
  REQUIRE(client
              .PostJson("/api/settle/prepare",
                        {{"gid", gid}, {"trans_type", "tcc"}, {"timeout_to_fail", 3600}})
              .status == 200);
  std::map<std::string, std::string> bodies;
  for (int i = 0; i < branches; ++i) {
    const std::string id = std::to_string(1000 + i);
    std::string data = PatternText(bytes, static_cast<std::uint64_t>(i) + 1);
    const JsonResponse r =
        client.PostJson("/api/settle/registerBranch", {{"gid", gid},
                                                       {"trans_type", "tcc"},
                                                       {"branch_id", id},
                                                       {"data", data},
                                                       {"confirm", "http://127.0.0.1:9/confirm"},
                                                       {"cancel", "http://127.0.0.1:9/cancel"}});
    INFO(r.body << r.error);
    REQUIRE(r.status == 200);
    bodies.emplace(id, std::move(data));
  }
  return bodies;
}

struct Followed {
  std::vector<json> branches;
  int pages = 0;
  std::size_t largest_page = 0;
  bool ok = true;
};

// Reads query?payloads=true of `gid` page after page, following next_position.
Followed FollowQuery(JsonClient& client, const std::string& gid) {
  Followed f;
  std::string position;
  for (int guard = 0; guard < 10'000; ++guard) {
    const JsonResponse page = client.Get("/api/settle/query?gid=" + gid + "&payloads=true" +
                                         (position.empty() ? "" : "&position=" + position));
    if (page.status != 200 || !page.json.is_object()) {
      f.ok = false;
      return f;
    }
    ++f.pages;
    f.largest_page = std::max(f.largest_page, page.body.size());
    for (const json& b : page.json["branches"]) f.branches.push_back(b);
    position = page.json["next_position"].get<std::string>();
    if (position.empty()) return f;
  }
  f.ok = false;
  return f;
}

TEST_CASE("a 1,000-branch TCC's payloads are read in pages within --max-answer-bytes, to the end",
          "[bounds][answers]") {
  testing::TempDir dir;
  constexpr std::size_t kCap = 256 << 10;
  SettledProcess settled(dir.File("settle.db"),
                         {"--grpc-port", "0", "--max-answer-bytes", std::to_string(kCap)});
  JsonClient client(settled.port());
  const std::map<std::string, std::string> bodies = RegisterTcc(client, "wide", 1000, 3000);

  const Followed f = FollowQuery(client, "wide");
  REQUIRE(f.ok);
  CHECK(f.largest_page <= kCap);
  CHECK(f.pages >= 20);  // 2,000 rows of 3 KB in pages of 256 KiB
  // Every row once, in order, each body byte for byte: a cancel and a confirm per branch.
  REQUIRE(f.branches.size() == 2 * bodies.size());
  std::map<std::string, int> rows;
  for (const json& b : f.branches) {
    const std::string id = b["branch_id"].get<std::string>();
    INFO("branch " << id << " " << b["op"]);
    ++rows[id];
    REQUIRE(bodies.contains(id));
    CHECK(b["data_encoding"] == "utf-8");
    CHECK(b["data"].get<std::string>() == bodies.at(id));
  }
  for (const auto& [id, count] : rows) CHECK(count == 2);
  CHECK(rows.size() == bodies.size());

  // Without payloads the same rows, in fewer pages.
  const JsonResponse small = client.Get("/api/settle/query?gid=wide");
  REQUIRE(small.status == 200);
  CHECK(small.body.size() <= kCap);
  CHECK_FALSE(small.json["next_position"].get<std::string>().empty());
  // The SDK's Query follows the pages: every row.
  auto sdk =
      sdk::Client::Create("http://127.0.0.1:" + std::to_string(settled.port()) + "/api/settle");
  REQUIRE(sdk);
  auto queried = (*sdk)->Query("wide");
  REQUIRE(queried);
  REQUIRE(queried->has_value());
  CHECK((*queried)->branches.size() == 2 * bodies.size());
  // A position that is not one is a 400 naming it.
  const JsonResponse bad = client.Get("/api/settle/query?gid=wide&position=x");
  CHECK(bad.status == 400);
  CHECK(bad.json["message"].get<std::string>().rfind("position: ", 0) == 0);
}

TEST_CASE("settled's memory stays bounded under three large readers at once and comes back",
          "[bounds][answers][memory]") {
  testing::TempDir dir;
  // Transactions of 100 MB: 50 branches of 1 MB, a cancel and a confirm row each.
  SettledProcess settled(dir.File("settle.db"),
                         {"--grpc-port", "0", "--max-body-bytes", std::to_string(2 << 20)});
  JsonClient client(settled.port());
  const std::map<std::string, std::string> bodies = RegisterTcc(client, "heavy", 50, 1 << 20);
  const pid_t pid = settled.process().pid();
  const std::int64_t baseline = ResidentKiB(pid) / 1024;
  INFO("baseline " << baseline << " MiB");
  REQUIRE(baseline > 0);

  std::atomic<bool> reading{true};
  std::atomic<std::int64_t> peak{0};
  std::thread sampler([&] {
    while (reading) {
      peak = std::max(peak.load(), ResidentKiB(pid) / 1024);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  std::vector<Followed> followed(3);
  std::vector<std::thread> readers;
  for (Followed& f : followed) {
    readers.emplace_back([&settled, &f] {
      JsonClient reader(settled.port());
      f = FollowQuery(reader, "heavy");
    });
  }
  for (std::thread& r : readers) r.join();
  reading = false;
  sampler.join();
  for (const Followed& f : followed) {
    REQUIRE(f.ok);
    CHECK(f.branches.size() == 100);
    CHECK(f.largest_page <= (std::size_t{4} << 20) + (std::size_t{2} << 20));
  }
  INFO("peak " << peak << " MiB");
  // Before: each reader's answer was one 200 MB string built from a document of it, and three
  // readers of such a transaction took settled past 1.3 GB. Now two loads at most (100 MB
  // each, what a pass also loads) and pages of 4 MiB.
  CHECK(peak - baseline < 450);
  // What the readers freed goes back to the system: settled comes back near its baseline.
  const bool back =
      Eventually([&] { return ResidentKiB(pid) / 1024 - baseline < 100; }, seconds(10));
  INFO("after " << ResidentKiB(pid) / 1024 << " MiB");
  CHECK(back);
}

// The bytes settled's database holds on disk: its file and its write-ahead log.
std::uintmax_t DatabaseBytes(const testing::TempDir& dir) {
  std::uintmax_t bytes = 0;
  for (const char* name : {"settle.db", "settle.db-wal"}) {
    std::error_code error;
    const std::uintmax_t size = std::filesystem::file_size(dir.File(name), error);
    if (!error) bytes += size;
  }
  return bytes;
}

TEST_CASE("a message to a topic of 300 subscribers stores its payload once, and each gets it all",
          "[bounds][topics]") {
  testing::TempDir dir;
  testing::ParticipantServer subscribers;
  auto settled = std::make_unique<SettledProcess>(dir.File("settle.db"),
                                                  std::vector<std::string>{"--grpc-port", "0"});
  JsonClient client(settled->port());
  constexpr int kSubscribers = 300;
  for (int i = 0; i < kSubscribers; ++i) {
    const JsonResponse r = client.Get("/api/dtmsvr/subscribe?topic=orders&url=" +
                                      subscribers.Url("/s/" + std::to_string(i)));
    REQUIRE(r.status == 200);
  }
  // Every delivery waits until the test has looked at the disk and restarted settled.
  subscribers.HoldAfter(0);
  const std::string payload = PatternText(100 * 1024, 43);
  const std::uintmax_t before = DatabaseBytes(dir);

  const JsonResponse submitted =
      client.PostJson("/api/settle/submit", {{"gid", "fanout"},
                                             {"trans_type", "msg"},
                                             {"steps", {{{"action", "topic://orders"}}}},
                                             {"payloads", {payload}}});
  INFO(submitted.body);
  REQUIRE(submitted.status == 200);

  // Synced before the 200: what the message holds is on disk now. Once per subscriber it was
  // 30 MB; once, its 100 KB and 300 small rows.
  const std::uintmax_t grown = DatabaseBytes(dir) - before;
  INFO("the database grew by " << grown << " bytes");
  CHECK(grown < 2 * 1024 * 1024);

  // kill -9 with deliveries in flight; the restarted settled reads the shared payload back.
  REQUIRE(subscribers.WaitForHeld(1));
  settled->Kill();
  subscribers.Release();
  settled = std::make_unique<SettledProcess>(dir.File("settle.db"),
                                             std::vector<std::string>{"--grpc-port", "0"});
  JsonClient after(settled->port());
  const bool done = Eventually(
      [&] {
        const JsonResponse q = after.Get("/api/settle/query?gid=fanout");
        return q.status == 200 && q.json["transaction"]["status"] == "succeed";
      },
      seconds(60));
  CHECK(done);
  // The outcome: every subscriber got the whole payload, byte for byte.
  for (int i = 0; i < kSubscribers; ++i) {
    const std::vector<testing::ReceivedCall> calls = subscribers.CallsTo("/s/" + std::to_string(i));
    INFO("subscriber " << i);
    REQUIRE_FALSE(calls.empty());
    for (const testing::ReceivedCall& call : calls) CHECK(call.body == payload);
  }
}

TEST_CASE("a thousand participant hosts leave at most --max-hosts gates and metric series",
          "[bounds][hosts]") {
  testing::TempDir dir;
  constexpr int kMaxHosts = 40;
  SettledProcess settled(dir.File("settle.db"),
                         {"--grpc-port", "0", "--max-hosts", std::to_string(kMaxHosts)});
  JsonClient client(settled.port());
  // Ten sagas of 100 concurrent steps, each step's action on a host of its own: 1,000
  // addresses of 127.0.0.0/8 on a port nothing listens on (refused at once, then retried).
  int host = 0;
  for (int saga = 0; saga < 10; ++saga) {
    json steps = json::array();
    json payloads = json::array();
    for (int s = 0; s < 100; ++s, ++host) {
      const std::string url = "http://127.0." + std::to_string(1 + host / 250) + "." +
                              std::to_string(1 + host % 250) + ":9/action";
      steps.push_back({{"action", url}});
      payloads.push_back("{}");
    }
    const JsonResponse r =
        client.PostJson("/api/settle/submit", {{"gid", "hosts-" + std::to_string(saga)},
                                               {"trans_type", "saga"},
                                               {"concurrent", true},
                                               {"steps", steps},
                                               {"payloads", payloads}});
    INFO(r.body);
    REQUIRE(r.status == 200);
  }
  // Every saga's steps were called: the gates fill up to the cap, the last "other".
  json hosts;
  const bool filled = Eventually(
      [&] {
        const JsonResponse r = client.Get("/api/admin/hosts");
        if (r.status != 200) return false;
        hosts = r.json["hosts"];
        return hosts.size() == kMaxHosts;
      },
      seconds(30));
  INFO(hosts.dump());
  REQUIRE(filled);
  bool other = false;
  for (const json& h : hosts) other = other || h["host"] == "other";
  CHECK(other);

  const JsonResponse metrics = client.Get("/api/metrics");
  REQUIRE(metrics.status == 200);
  std::istringstream lines(metrics.body);
  std::string line;
  int circuit_series = 0;
  while (std::getline(lines, line)) {
    if (line.rfind("settle_circuit_state{", 0) == 0) ++circuit_series;
  }
  CHECK(circuit_series == kMaxHosts);
  CHECK(metrics.body.find("settle_circuit_state{host=\"other\"}") != std::string::npos);
  CHECK(metrics.body.size() < 64 * 1024);
  // And it still stays at the cap while the thousand hosts are retried.
  CHECK(client.Get("/api/admin/hosts").json["hosts"].size() == kMaxHosts);
}

TEST_CASE("a caller over --rate-limit gets 429 with Retry-After, others go on, and it recovers",
          "[bounds][rate]") {
  testing::TempDir dir;
  const std::string tokens = dir.File("tokens");
  std::ofstream(tokens) << "client orders-token-0123456789 # orders\n"
                        << "client orders-token-rotated-01 # orders\n"
                        << "client billing-token-0123456789 # billing\n";
  SettledProcess settled(dir.File("settle.db"),
                         {"--grpc-port", "0", "--token-file", tokens, "--rate-limit", "2/5"});
  JsonClient orders(settled.port());
  orders.SetHeader("Authorization", "Bearer orders-token-0123456789");
  JsonClient rotated(settled.port());
  rotated.SetHeader("Authorization", "Bearer orders-token-rotated-01");
  JsonClient billing(settled.port());
  billing.SetHeader("Authorization", "Bearer billing-token-0123456789");

  // Its burst, then 429 (two tokens of one name are one caller).
  int refused_at = -1;
  JsonResponse refusal;
  for (int i = 0; i < 20 && refused_at < 0; ++i) {
    JsonResponse r = (i % 2 == 0 ? orders : rotated).Get("/api/settle/newGid");
    if (r.status == 429) {
      refused_at = i;
      refusal = std::move(r);
    } else {
      REQUIRE(r.status == 200);
    }
  }
  INFO(refusal.body);
  REQUIRE(refused_at >= 5);
  CHECK(refused_at <= 6);  // a token may come back while the burst is spent
  CHECK(refusal.json["message"].get<std::string>().rfind("quota: ", 0) == 0);
  CHECK(refusal.body.find("--rate-limit") != std::string::npos);
  auto retry_after = refusal.headers.find("Retry-After");
  REQUIRE(retry_after != refusal.headers.end());
  CHECK(retry_after->second == "1");
  // Another caller is not limited by it, and /api/ping never is.
  CHECK(billing.Get("/api/settle/newGid").status == 200);
  JsonClient anonymous(settled.port());
  for (int i = 0; i < 20; ++i) REQUIRE(anonymous.Get("/api/ping").status == 200);
  // An unknown token counts against its address: its burst, then 429 too.
  JsonClient stranger(settled.port());
  stranger.SetHeader("Authorization", "Bearer not-a-token-0123456789");
  int strangers_refused = 0;
  for (int i = 0; i < 20; ++i) {
    if (stranger.Get("/api/settle/newGid").status == 429) ++strangers_refused;
  }
  CHECK(strangers_refused >= 10);
  // Within a second the caller is served again.
  CHECK(Eventually([&] { return orders.Get("/api/settle/newGid").status == 200; }, seconds(5),
                   std::chrono::milliseconds(100)));
  // Counted: the scrape's own caller waits for its share too.
  JsonResponse metrics;
  CHECK(Eventually(
      [&] {
        metrics = billing.Get("/api/metrics");
        return metrics.status == 200;
      },
      seconds(5), std::chrono::milliseconds(100)));
  const std::string counted = "settle_api_rate_limited_total{port=\"http\"} ";
  const std::size_t at = metrics.body.find(counted);
  REQUIRE(at != std::string::npos);
  CHECK(std::stoi(metrics.body.substr(at + counted.size())) >= 11);
}

TEST_CASE("over gRPC a caller over --rate-limit gets RESOURCE_EXHAUSTED, one count for both ports",
          "[bounds][rate][grpc]") {
  testing::TempDir dir;
  testing::SettledWithGrpc settled(dir.File("settle.db"), {"--rate-limit", "1/4"},
                                   dir.File("settled"));
  auto stub = dtmgimp::Dtm::NewStub(
      grpc::CreateChannel(settled.GrpcAddress(), grpc::InsecureChannelCredentials()));
  // Without tokens a caller is its address: the test's, on both ports.
  int served = 0;
  grpc::Status refused;
  for (int i = 0; i < 10 && refused.ok(); ++i) {
    grpc::ClientContext ctx;
    dtmgimp::DtmGidReply reply;
    grpc::Status s = stub->NewGid(&ctx, google::protobuf::Empty(), &reply);
    if (s.ok()) {
      ++served;
      CHECK_FALSE(reply.gid().empty());
    } else {
      refused = s;
    }
  }
  CHECK(served >= 4);
  CHECK(served <= 5);
  CHECK(refused.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED);
  CHECK(refused.error_message().rfind("quota: ", 0) == 0);
  CHECK(refused.error_message().find("--rate-limit") != std::string::npos);
  // The same caller over HTTP finds its bucket empty.
  JsonClient http(settled.process->port());
  CHECK(http.Get("/api/settle/newGid").status == 429);
  // A second later it has a token again.
  CHECK(Eventually(
      [&] {
        grpc::ClientContext ctx;
        dtmgimp::DtmGidReply reply;
        return stub->NewGid(&ctx, google::protobuf::Empty(), &reply).ok();
      },
      seconds(5), std::chrono::milliseconds(100)));
}

TEST_CASE("a timeout_to_fail over --max-timeout-to-fail is refused with 400 naming the field",
          "[bounds][timeout]") {
  testing::TempDir dir;
  SettledProcess settled(dir.File("settle.db"),
                         {"--grpc-port", "0", "--max-timeout-to-fail", "1h"});
  JsonClient client(settled.port());
  const JsonResponse refused = client.PostJson(
      "/api/settle/prepare", {{"gid", "parked"}, {"trans_type", "tcc"}, {"timeout_to_fail", 3601}});
  CHECK(refused.status == 400);
  CHECK(refused.json["message"] ==
        "timeout_to_fail: at most 3600 seconds on this server (--max-timeout-to-fail)");
  CHECK(client.Get("/api/settle/query?gid=parked").json["transaction"].is_null());
  // A saga too, and ten years (the protocol's own bound) as well.
  const JsonResponse saga =
      client.PostJson("/api/settle/submit", {{"gid", "parked-saga"},
                                             {"trans_type", "saga"},
                                             {"timeout_to_fail", 315360000},
                                             {"steps", {{{"action", "http://127.0.0.1:9/a"}}}},
                                             {"payloads", {"{}"}}});
  CHECK(saga.status == 400);
  CHECK(saga.json["message"].get<std::string>().rfind("timeout_to_fail: ", 0) == 0);
  // At the ceiling it is taken.
  CHECK(client
            .PostJson("/api/settle/prepare",
                      {{"gid", "parked"}, {"trans_type", "tcc"}, {"timeout_to_fail", 3600}})
            .status == 200);
}

TEST_CASE(
    "a request_timeout over --max-branch-timeout is refused naming the field, over HTTP and gRPC",
    "[bounds][timeout][grpc]") {
  testing::TempDir dir;
  testing::SettledWithGrpc settled(dir.File("settle.db"), {"--max-branch-timeout", "1m"},
                                   dir.File("settled"));
  JsonClient client(settled.process->port());
  const auto stored = [&](const std::string& gid) {
    return !client.Get("/api/settle/query?gid=" + gid).json["transaction"].is_null();
  };
  const JsonResponse refused = client.PostJson(
      "/api/settle/prepare", {{"gid", "held"}, {"trans_type", "tcc"}, {"request_timeout", 61}});
  CHECK(refused.status == 400);
  CHECK(refused.json["message"] ==
        "request_timeout: at most 60 seconds on this server (--max-branch-timeout)");
  CHECK_FALSE(stored("held"));
  // A saga asking for ten years per call is not run either.
  const JsonResponse saga =
      client.PostJson("/api/settle/submit", {{"gid", "held-saga"},
                                             {"trans_type", "saga"},
                                             {"request_timeout", 315360000},
                                             {"steps", {{{"action", "http://127.0.0.1:9/a"}}}},
                                             {"payloads", {"{}"}}});
  CHECK(saga.status == 400);
  CHECK(saga.json["message"].get<std::string>().rfind("request_timeout: ", 0) == 0);
  CHECK_FALSE(stored("held-saga"));

  auto stub = dtmgimp::Dtm::NewStub(
      grpc::CreateChannel(settled.GrpcAddress(), grpc::InsecureChannelCredentials()));
  const auto prepare = [&](const std::string& gid, std::int64_t request_timeout) {
    dtmgimp::DtmRequest request;
    request.set_gid(gid);
    request.set_transtype("tcc");
    request.mutable_transoptions()->set_requesttimeout(request_timeout);
    grpc::ClientContext ctx;
    google::protobuf::Empty reply;
    return stub->Prepare(&ctx, request, &reply);
  };
  const grpc::Status over_grpc = prepare("held-grpc", 61);
  CHECK(over_grpc.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(over_grpc.error_message() ==
        "TransOptions.RequestTimeout: at most 60 seconds on this server (--max-branch-timeout)");
  CHECK_FALSE(stored("held-grpc"));

  // At the ceiling it is taken, by both doors, and stored as asked.
  CHECK(prepare("held-grpc", 60).ok());
  CHECK(client
            .PostJson("/api/settle/prepare",
                      {{"gid", "held"}, {"trans_type", "tcc"}, {"request_timeout", 60}})
            .status == 200);
  for (const char* gid : {"held", "held-grpc"}) {
    INFO(gid);
    const JsonResponse read = client.Get(std::string("/api/settle/query?gid=") + gid);
    CHECK(read.json["transaction"]["options"]["request_timeout"] == 60);
  }
}

}  // namespace
}  // namespace settle
