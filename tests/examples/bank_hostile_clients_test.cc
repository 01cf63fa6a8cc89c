// Issue 43's slowloris against a real bank-participant (the SDK's participant server): slow
// connections from one host (127.0.0.2; Linux routes all of 127/8 to the loopback interface)
// fill only that host's --max-connections-per-peer, while settled's saga and the account reads
// from 127.0.0.1 go on; a trickled request is cut at --request-timeout; an unknown route is
// refused from its head; what was refused and cut counted on GET /metrics; a bank whose
// descriptor limit cannot hold its connection cap lowers it and still serves. Bounded: a few
// hundred connections, answers awaited with deadlines.
#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "child_process.h"
#include "eventually.h"
#include "example_process.h"
#include "file_text.h"
#include "json_client.h"
#include "metrics_sample.h"
#include "raw_connection.h"
#include "settled_process.h"
#include "temp_dir.h"

namespace settle {
namespace {

using namespace std::chrono_literals;
using Catch::Matchers::Contains;
using nlohmann::json;
using testing::ChildProcess;
using testing::JsonClient;
using testing::RawConnection;
using testing::SettledProcess;
using testing::TempDir;

// A bank-participant with three accounts of 100 and the given limits, run by `wrapper` when
// given (a shell that sets a limit first).
struct Bank {
  Bank(TempDir& dir, const std::string& name, std::vector<std::string> limits,
       std::vector<std::string> wrapper = {})
      : log(dir.File(name + ".log")) {
    std::vector<std::string> argv = std::move(wrapper);
    for (const std::string& arg :
         {std::string(BANK_BINARY), std::string("--port"), std::string("0"), std::string("--db"),
          dir.File(name + ".db"), std::string("--accounts"), std::string("3"),
          std::string("--initial-balance"), std::string("100")}) {
      argv.push_back(arg);
    }
    argv.insert(argv.end(), limits.begin(), limits.end());
    process = std::make_unique<ChildProcess>(argv, log);
    port = testing::ListeningPort(*process);
    REQUIRE(port > 0);
  }
  std::string Url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port) + path;
  }
  // A sample of GET /metrics (-1 when the page or the sample is missing).
  double Metric(const std::string& sample) const {
    const testing::JsonResponse page = JsonClient(port).Get("/metrics");
    if (page.status != 200) return -1;
    return testing::SampleValue(page.body, sample);
  }
  std::string log;
  std::unique_ptr<ChildProcess> process;
  int port = 0;
};

TEST_CASE(
    "slow connections from one host fill only its per-peer cap at a bank: settled's saga and "
    "the account reads from another host go on",
    "[process][hostile]") {
  TempDir dir;
  Bank bank(dir, "bank", {"--max-connections-per-peer", "50", "--request-timeout", "60s"});
  SettledProcess settled(dir.File("settle.db"), {});

  // 200 slow sockets from one host, each with the start of a branch call's head.
  std::vector<std::unique_ptr<RawConnection>> slow;
  for (int i = 0; i < 200; ++i) {
    slow.push_back(std::make_unique<RawConnection>(bank.port, "127.0.0.2"));
    slow.back()->Send("POST /api/TransIn HTTP/1.1\r\nHost: x\r\nX-Slow: a");
  }
  std::vector<bool> done(slow.size(), false);
  int refused = 0;
  testing::Eventually(
      [&] {
        for (std::size_t i = 0; i < slow.size(); ++i) {
          if (done[i] || !slow[i]->Readable(0ms)) continue;
          done[i] = true;
          const RawConnection::Answer answer = slow[i]->Read(1s);
          if (answer.status == 503 && answer.body.find("cap per peer") != std::string::npos) {
            ++refused;
          }
        }
        return refused >= 150;
      },
      20s, 20ms);
  CHECK(refused == 150);

  int reads = 0;
  for (int i = 0; i < 20; ++i) {
    JsonClient probe(bank.port);  // a new connection each time, from 127.0.0.1
    if (probe.Get("/api/accounts/1").status == 200) ++reads;
  }
  CHECK(reads == 20);
  JsonClient client(settled.port());
  const json saga = {{"gid", "in-while-slow"},
                     {"trans_type", "saga"},
                     {"steps",
                      {{{"action", bank.Url("/api/TransIn")},
                        {"compensate", bank.Url("/api/TransInCompensate")}}}},
                     {"payloads", {R"({"account_id":"1","amount":30})"}}};
  REQUIRE(client.PostJson("/api/settle/submit", saga).status == 200);
  std::string status;
  CHECK(testing::Eventually(
      [&] {
        status = client.Get("/api/settle/query?gid=in-while-slow").json["transaction"]["status"];
        return status == "succeed";
      },
      15s, 20ms));
  CHECK(status == "succeed");
  CHECK(JsonClient(bank.port).Get("/api/accounts/1").json["balance"] == 130);
  std::size_t still_open = 0;
  for (auto& c : slow) still_open += c->Readable(0ms) ? 0 : 1;
  CHECK(still_open == 50);  // held by the cap, not cut by a timeout
  // Counted, every one of them, and none cut.
  CHECK(bank.Metric("settle_participant_connections_refused_total") == 150);
  CHECK(bank.Metric("settle_participant_requests_timed_out_total") == 0);
  CHECK(bank.Metric("settle_participant_connections") >= 50);
  CHECK(bank.Metric("settle_participant_max_connections") == 10000);
}

TEST_CASE(
    "a bank cuts a trickled request at --request-timeout and refuses an unknown route before "
    "its body",
    "[process][hostile]") {
  TempDir dir;
  Bank bank(dir, "bank", {"--request-timeout", "1s"});
  RawConnection trickle(bank.port);
  const std::string head =
      "POST /api/TransIn HTTP/1.1\r\nHost: x\r\nX-Slow: " + std::string(2000, 'a');
  std::size_t sent = 0;
  for (char byte : head) {
    if (trickle.Readable(20ms) || !trickle.Send(std::string(1, byte))) break;
    ++sent;
  }
  const RawConnection::Answer cut = trickle.Read();
  CHECK(cut.status == 408);
  CHECK_THAT(cut.body, Contains("request timeout"));
  CHECK(sent < head.size());

  RawConnection unknown(bank.port);
  REQUIRE(unknown.Send("POST /api/nowhere HTTP/1.1\r\nHost: x\r\nContent-Length: 1048576\r\n\r\n"));
  const RawConnection::Answer missing = unknown.Read();  // no byte of the body was sent
  CHECK(missing.status == 404);
  CHECK(*missing.Header("Connection") == "close");
  CHECK(bank.Metric("settle_participant_requests_timed_out_total") == 1);
  CHECK(bank.Metric("settle_participant_connections_refused_total") == 0);
}

TEST_CASE(
    "a bank whose descriptor limit cannot hold its connection cap lowers it, says so, and "
    "refuses connections beyond it while it serves",
    "[process][hostile][descriptors]") {
  TempDir dir;
  // A hard limit of 256: a quarter (64) kept for the rest, 192 for connections.
  Bank bank(dir, "bank", {"--max-connections-per-peer", "1000"},
            {"/bin/sh", "-c", "ulimit -n 256 && exec \"$0\" \"$@\""});
  CHECK_THAT(testing::ReadFile(bank.log),
             Contains("settle participant: max_connections lowered from 10000 to 192: the "
                      "descriptor limit 256") &&
                 Contains("max_connections_per_peer lowered with it"));

  std::vector<std::unique_ptr<RawConnection>> held;
  for (int i = 0; i < 200; ++i) {
    held.push_back(std::make_unique<RawConnection>(bank.port, "127.0.0.2"));
    held.back()->Send("GET /api/accounts/1 HTTP/1.1\r\nHost: x\r\nX-Slow: a");
  }
  int refused = 0;
  std::vector<bool> done(held.size(), false);
  testing::Eventually(
      [&] {
        for (std::size_t i = 0; i < held.size(); ++i) {
          if (done[i] || !held[i]->Readable(0ms)) continue;
          done[i] = true;
          if (held[i]->Read(1s).status == 503) ++refused;
        }
        return refused >= 8;
      },
      20s, 20ms);
  CHECK(refused == 8);
  held.clear();
  // Once they are gone the bank serves again, not out of descriptors.
  CHECK(testing::Eventually(
      [&] { return JsonClient(bank.port).Get("/api/accounts/1").status == 200; }, 10s, 20ms));
  CHECK(bank.Metric("settle_participant_connections_refused_total") == 8);
  CHECK(bank.Metric("settle_participant_max_connections") == 192);
}

}  // namespace
}  // namespace settle
