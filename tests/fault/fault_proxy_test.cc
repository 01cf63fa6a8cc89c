#include "fault_proxy.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/buffer.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include "fault_proxy_wire.h"
#include "json_client.h"
#include "participant_server.h"

namespace settle::testing {
namespace {

using boost::asio::ip::tcp;
using namespace std::chrono_literals;

// A client that writes exact bytes and reads exact answers, for what JsonClient hides:
// keep-alive, how answers are framed, broken answers, garbage. One answer per request sent:
// nothing pipelined.
class RawClient {
 public:
  explicit RawClient(int port) : socket_(io_) {
    socket_.connect(
        tcp::endpoint(boost::asio::ip::address_v4::loopback(), static_cast<unsigned short>(port)));
  }

  void Send(const std::string& bytes) { boost::asio::write(socket_, boost::asio::buffer(bytes)); }

  // The next complete answer; status 0 when the connection ends without one.
  fault_proxy::Response Receive() {
    fault_proxy::Response response;
    if (fault_proxy::ReadResponse(socket_, response) != fault_proxy::ReadStatus::kOk) {
      response.status = 0;
    }
    return response;
  }

  // Exactly `count` bytes, before any Receive().
  std::string ReceiveBytes(std::size_t count) {
    std::string out(count, '\0');
    boost::system::error_code error;
    out.resize(boost::asio::read(socket_, boost::asio::buffer(out), error));
    return out;
  }

  // Everything up to the end of the connection.
  std::string ReceiveUntilClose() {
    std::string out;
    char chunk[4096];
    boost::system::error_code error;
    while (true) {
      std::size_t count = socket_.read_some(boost::asio::buffer(chunk), error);
      if (error) return out;
      out.append(chunk, count);
    }
  }

 private:
  boost::asio::io_context io_;
  tcp::socket socket_;
};

std::string GetRequest(const std::string& target, const std::string& extra_headers = "") {
  return "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + extra_headers + "\r\n";
}

std::string PostRequest(const std::string& target, const std::string& body,
                        const std::string& extra_headers = "") {
  return "POST " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
         "Content-Length: " + std::to_string(body.size()) + "\r\n" + extra_headers + "\r\n" + body;
}

// A port on which nothing listens: a server's, after it stopped.
int DeadPort() {
  ParticipantServer server;
  return server.port();
}

// An upstream that answers the first request on each of `answers.size()` connections with
// the given raw bytes, then closes the connection.
class CannedUpstream {
 public:
  explicit CannedUpstream(std::vector<std::string> answers)
      : acceptor_(io_, tcp::endpoint(boost::asio::ip::address_v4::loopback(), 0)) {
    thread_ = std::thread([this, answers = std::move(answers)] {
      for (const std::string& answer : answers) {
        tcp::socket socket(io_);
        boost::system::error_code error;
        acceptor_.accept(socket, error);
        if (error) return;
        std::string request;
        char chunk[4096];
        while (request.find("\r\n\r\n") == std::string::npos) {
          std::size_t count = socket.read_some(boost::asio::buffer(chunk), error);
          if (error) break;
          request.append(chunk, count);
        }
        boost::asio::write(socket, boost::asio::buffer(answer), error);
      }
    });
  }
  ~CannedUpstream() { thread_.join(); }

  int port() const { return acceptor_.local_endpoint().port(); }

 private:
  boost::asio::io_context io_;
  tcp::acceptor acceptor_;
  std::thread thread_;
};

TEST_CASE("the proxy forwards GET and POST unchanged over one keep-alive connection",
          "[fault_proxy]") {
  ParticipantServer upstream;
  upstream.SetDefault("/bank/try", {200, R"({"dtm_result":"SUCCESS","n":1})"});
  upstream.SetDefault("/bank/confirm", {409, R"({"dtm_result":"FAILURE"})"});
  FaultProxy proxy(upstream.port());
  RawClient client(proxy.port());

  client.Send(GetRequest("/bank/try?gid=g1&trans_type=tcc&branch_id=01&op=try",
                         "X-Branch-Token: t-42\r\n"));
  fault_proxy::Response first = client.Receive();
  client.Send(PostRequest("/bank/confirm?gid=g1&op=confirm", R"({"amount": 30})"));
  fault_proxy::Response second = client.Receive();

  CHECK(first.status == 200);
  CHECK(first.body == R"({"dtm_result":"SUCCESS","n":1})");
  CHECK(second.status == 409);
  CHECK(second.body == R"({"dtm_result":"FAILURE"})");
  std::vector<ReceivedCall> calls = upstream.Calls();
  REQUIRE(calls.size() == 2);
  CHECK(calls[0].method == "GET");
  CHECK(calls[0].path == "/bank/try");
  CHECK(calls[0].query ==
        std::map<std::string, std::string>{
            {"gid", "g1"}, {"trans_type", "tcc"}, {"branch_id", "01"}, {"op", "try"}});
  CHECK(calls[0].headers.count("X-Branch-Token") == 1);
  CHECK(calls[0].headers.find("X-Branch-Token")->second == "t-42");
  CHECK(calls[0].body.empty());
  CHECK(calls[1].method == "POST");
  CHECK(calls[1].path == "/bank/confirm");
  CHECK(calls[1].query.at("op") == "confirm");
  CHECK(calls[1].headers.find("Content-Type")->second == "application/json");
  CHECK(calls[1].body == R"({"amount": 30})");
  CHECK(proxy.Seen("/bank/try") == 1);
  CHECK(proxy.Seen("/bank/confirm") == 1);
  CHECK(proxy.FaultsApplied() == 0);
}

TEST_CASE("the proxy forwards what a JsonClient sends and answers what the upstream answers",
          "[fault_proxy]") {
  ParticipantServer upstream;
  upstream.SetDefault("/saga/action", {425, R"({"dtm_result":"ONGOING"})"});
  FaultProxy proxy(upstream.port());
  JsonClient client(proxy.port());

  for (int i = 0; i < 3; ++i) {
    JsonResponse response = client.Post("/saga/action?gid=g" + std::to_string(i), "{}");
    CHECK(response.status == 425);
    CHECK(response.json["dtm_result"] == "ONGOING");
  }
  CHECK(upstream.CountCalls("/saga/action") == 3);
  CHECK(proxy.Url("/saga/action") ==
        "http://127.0.0.1:" + std::to_string(proxy.port()) + "/saga/action");
}

TEST_CASE("kDropRequest closes the connection and the upstream never sees the request",
          "[fault_proxy]") {
  ParticipantServer upstream;
  FaultProxy proxy(upstream.port());
  proxy.AddRule({.path = "/bank/confirm", .fault = Fault::kDropRequest});
  JsonClient client(proxy.port());

  JsonResponse response = client.Post("/bank/confirm?gid=g1", R"({"amount":30})");

  CHECK(response.status == 0);
  CHECK(proxy.Seen("/bank/confirm") == 1);
  CHECK(proxy.FaultsApplied() == 1);
  CHECK(upstream.CountCalls("/bank/confirm") == 0);
}

TEST_CASE("kDropResponse lets the upstream act but the client gets no answer", "[fault_proxy]") {
  ParticipantServer upstream;
  FaultProxy proxy(upstream.port());
  proxy.AddRule({.path = "/bank/confirm", .fault = Fault::kDropResponse});
  JsonClient client(proxy.port());

  JsonResponse response = client.Post("/bank/confirm?gid=g1", R"({"amount":30})");

  CHECK(response.status == 0);
  CHECK(upstream.CountCalls("/bank/confirm") == 1);
  CHECK(proxy.FaultsApplied() == 1);
}

TEST_CASE("kDelay forwards the request and its answer after the delay", "[fault_proxy]") {
  ParticipantServer upstream;
  FaultProxy proxy(upstream.port());
  proxy.AddRule({.path = "/bank/try", .fault = Fault::kDelay, .delay = 50ms});
  JsonClient client(proxy.port());

  JsonResponse response = client.Post("/bank/try?gid=g1", R"({"amount":30})");

  CHECK(response.status == 200);
  CHECK(response.json["dtm_result"] == "SUCCESS");
  CHECK(upstream.CountCalls("/bank/try") == 1);
  CHECK(proxy.FaultsApplied() == 1);
}

TEST_CASE("kHold keeps a request from the upstream until Release", "[fault_proxy]") {
  ParticipantServer upstream;
  FaultProxy proxy(upstream.port());
  proxy.AddRule({.path = "/bank/cancel", .fault = Fault::kHold});
  auto answer = std::async(std::launch::async, [&proxy] {
    return JsonClient(proxy.port()).Post("/bank/cancel?gid=g1", "{}");
  });

  REQUIRE(proxy.WaitForHeld("/bank/cancel", 1));
  CHECK(proxy.Held("/bank/cancel") == 1);
  CHECK(proxy.Seen("/bank/cancel") == 1);
  CHECK(upstream.CountCalls("/bank/cancel") == 0);

  proxy.Release("/bank/cancel");
  JsonResponse response = answer.get();
  CHECK(response.status == 200);
  CHECK(upstream.CountCalls("/bank/cancel") == 1);
  CHECK(proxy.Held("/bank/cancel") == 0);
}

TEST_CASE("Release lets go of every request held on its path and of no other", "[fault_proxy]") {
  ParticipantServer upstream;
  FaultProxy proxy(upstream.port());
  proxy.AddRule({.path = "/a", .fault = Fault::kHold, .times = -1});
  proxy.AddRule({.path = "/b", .fault = Fault::kHold});
  auto post = [&proxy](const std::string& path) {
    return std::async(std::launch::async,
                      [&proxy, path] { return JsonClient(proxy.port()).Post(path, "{}"); });
  };
  auto a1 = post("/a");
  auto a2 = post("/a");
  auto b = post("/b");
  REQUIRE(proxy.WaitForHeld("/a", 2));
  REQUIRE(proxy.WaitForHeld("/b", 1));

  proxy.Release("/a");
  CHECK(a1.get().status == 200);
  CHECK(a2.get().status == 200);
  CHECK(proxy.Held("/b") == 1);
  CHECK(upstream.CountCalls("/b") == 0);

  proxy.Release("/b");
  CHECK(b.get().status == 200);
}

TEST_CASE("kDuplicate sends the request upstream twice and answers with the first answer",
          "[fault_proxy]") {
  ParticipantServer upstream;
  upstream.Script("/saga/compensate", {{200, R"({"first":true})"}, {503, R"({"first":false})"}});
  FaultProxy proxy(upstream.port());
  proxy.AddRule({.path = "/saga/compensate", .fault = Fault::kDuplicate});
  JsonClient client(proxy.port());

  JsonResponse response = client.Post("/saga/compensate?gid=g1", R"({"amount":30})");

  CHECK(response.status == 200);
  CHECK(response.json["first"] == true);
  std::vector<ReceivedCall> calls = upstream.CallsTo("/saga/compensate");
  REQUIRE(calls.size() == 2);
  CHECK(calls[0].body == R"({"amount":30})");
  CHECK(calls[1].body == R"({"amount":30})");
  CHECK(calls[1].query == calls[0].query);
}

TEST_CASE("kRespond answers for the upstream, which never sees the request", "[fault_proxy]") {
  ParticipantServer upstream;
  FaultProxy proxy(upstream.port());
  proxy.AddRule({.path = "/bank/confirm",
                 .fault = Fault::kRespond,
                 .status = 425,
                 .body = R"({"dtm_result":"ONGOING"})"});
  JsonClient client(proxy.port());

  JsonResponse response = client.Post("/bank/confirm?gid=g1", "{}");
  JsonResponse next = client.Post("/bank/confirm?gid=g1", "{}");

  CHECK(response.status == 425);
  CHECK(response.body == R"({"dtm_result":"ONGOING"})");
  CHECK(next.status == 200);  // the rule applied once, and the connection stayed usable
  CHECK(upstream.CountCalls("/bank/confirm") == 1);
}

TEST_CASE("kCloseMidBody lets the upstream act and cuts its answer in half", "[fault_proxy]") {
  const std::string body = R"({"dtm_result":"SUCCESS","padding":"0123456789"})";
  ParticipantServer upstream;
  upstream.SetDefault("/bank/try", {200, body});
  FaultProxy proxy(upstream.port());
  proxy.AddRule({.path = "/bank/try", .fault = Fault::kCloseMidBody});

  SECTION("a JsonClient gets no answer") {
    JsonClient client(proxy.port());
    CHECK(client.Post("/bank/try?gid=g1", "{}").status == 0);
  }
  SECTION("the bytes sent are the head and half of the body") {
    RawClient client(proxy.port());
    client.Send(PostRequest("/bank/try?gid=g1", "{}"));
    std::string received = client.ReceiveUntilClose();
    CHECK(received.rfind("HTTP/1.1 200", 0) == 0);
    CHECK(received.find("Content-Length: " + std::to_string(body.size()) + "\r\n") !=
          std::string::npos);
    CHECK(received.substr(received.find("\r\n\r\n") + 4) == body.substr(0, body.size() / 2));
  }
  CHECK(upstream.CountCalls("/bank/try") == 1);
}

TEST_CASE("a rule lets `skip` requests through, then faults the next `times`", "[fault_proxy]") {
  ParticipantServer upstream;
  FaultProxy proxy(upstream.port());
  JsonClient client(proxy.port());
  auto statuses = [&client](int count) {
    std::vector<int> out;
    for (int i = 0; i < count; ++i) out.push_back(client.Post("/bank/try", "{}").status);
    return out;
  };

  SECTION("skip 2, times 1: only the third request") {
    proxy.AddRule({.path = "/bank/try", .fault = Fault::kRespond, .skip = 2, .times = 1});
    CHECK(statuses(5) == std::vector<int>{200, 200, 503, 200, 200});
    CHECK(proxy.FaultsApplied() == 1);
    CHECK(upstream.CountCalls("/bank/try") == 4);
  }
  SECTION("times -1: every request") {
    proxy.AddRule({.path = "/bank/try", .fault = Fault::kRespond, .times = -1});
    CHECK(statuses(4) == std::vector<int>{503, 503, 503, 503});
    CHECK(upstream.CountCalls("/bank/try") == 0);
  }
  SECTION("the first rule that applies wins; later rules count what earlier ones let through") {
    proxy.AddRule({.path = "/bank/try", .fault = Fault::kRespond, .times = 1, .status = 500});
    proxy.AddRule({.path = "/bank/try", .fault = Fault::kRespond, .skip = 1, .status = 504});
    CHECK(statuses(4) == std::vector<int>{500, 200, 504, 200});
  }
  CHECK(proxy.Seen("/bank/try") >= 4);
}

TEST_CASE("a rule on one path leaves other paths alone", "[fault_proxy]") {
  ParticipantServer upstream;
  FaultProxy proxy(upstream.port());
  proxy.AddRule({.path = "/bank/cancel", .fault = Fault::kDropRequest, .times = -1});
  JsonClient client(proxy.port());

  CHECK(client.Post("/bank/confirm?gid=g1", "{}").status == 200);
  CHECK(client.Get("/bank/cancelled?gid=g1").status == 200);
  CHECK(client.Post("/bank/cancel?gid=g1", "{}").status == 0);

  CHECK(upstream.CountCalls("/bank/confirm") == 1);
  CHECK(upstream.CountCalls("/bank/cancelled") == 1);
  CHECK(upstream.CountCalls("/bank/cancel") == 0);
  CHECK(proxy.FaultsApplied() == 1);
}

TEST_CASE("ClearRules ends every fault", "[fault_proxy]") {
  ParticipantServer upstream;
  FaultProxy proxy(upstream.port());
  proxy.AddRule({.path = "/bank/try", .fault = Fault::kRespond, .times = -1});
  JsonClient client(proxy.port());
  CHECK(client.Post("/bank/try", "{}").status == 503);

  proxy.ClearRules();

  CHECK(client.Post("/bank/try", "{}").status == 200);
  CHECK(upstream.CountCalls("/bank/try") == 1);
}

std::vector<int> RandomStatuses(int upstream_port, const RandomFaults& faults, int count,
                                std::size_t* applied) {
  FaultProxy proxy(upstream_port);
  proxy.SetRandomFaults(faults);
  JsonClient client(proxy.port());
  std::vector<int> out;
  for (int i = 0; i < count; ++i) out.push_back(client.Post("/soak", "{}").status);
  *applied = proxy.FaultsApplied();
  return out;
}

TEST_CASE("random faults are drawn from the list, deterministically for a seed", "[fault_proxy]") {
  ParticipantServer upstream;
  RandomFaults faults{.probability = 1.0,
                      .seed = 42,
                      .faults = {Fault::kRespond, Fault::kDropRequest},
                      .status = 500};
  std::size_t applied = 0;

  std::vector<int> first = RandomStatuses(upstream.port(), faults, 20, &applied);
  CHECK(applied == 20);
  std::vector<int> second = RandomStatuses(upstream.port(), faults, 20, &applied);

  CHECK(first == second);
  CHECK(std::count(first.begin(), first.end(), 500) > 0);
  CHECK(std::count(first.begin(), first.end(), 0) > 0);
  CHECK(std::count(first.begin(), first.end(), 500) + std::count(first.begin(), first.end(), 0) ==
        20);
  CHECK(upstream.CountCalls("/soak") == 0);
}

TEST_CASE("random faults with probability 0 apply none", "[fault_proxy]") {
  ParticipantServer upstream;
  std::size_t applied = 1;
  std::vector<int> statuses = RandomStatuses(
      upstream.port(), {.probability = 0.0, .faults = {Fault::kDropRequest}}, 10, &applied);
  CHECK(statuses == std::vector<int>(10, 200));
  CHECK(applied == 0);
  CHECK(upstream.CountCalls("/soak") == 10);
}

TEST_CASE("a random kHold is a delay, so that nothing waits for a Release", "[fault_proxy]") {
  ParticipantServer upstream;
  std::size_t applied = 0;
  std::vector<int> statuses = RandomStatuses(
      upstream.port(), {.probability = 1.0, .faults = {Fault::kHold}, .delay = 1ms}, 3, &applied);
  CHECK(statuses == std::vector<int>(3, 200));
  CHECK(applied == 3);
}

TEST_CASE("rules take precedence over random faults", "[fault_proxy]") {
  ParticipantServer upstream;
  FaultProxy proxy(upstream.port());
  proxy.SetRandomFaults({.probability = 1.0, .faults = {Fault::kRespond}, .status = 500});
  proxy.AddRule({.path = "/soak", .fault = Fault::kRespond, .status = 409});
  JsonClient client(proxy.port());

  CHECK(client.Post("/soak", "{}").status == 409);
  CHECK(client.Post("/soak", "{}").status == 500);
  CHECK(proxy.FaultsApplied() == 2);
}

TEST_CASE("SetUpstream sends later requests to another server", "[fault_proxy]") {
  ParticipantServer before;
  ParticipantServer after;
  FaultProxy proxy(before.port());
  JsonClient client(proxy.port());
  CHECK(client.Post("/bank/try", "{}").status == 200);

  proxy.SetUpstream(after.port());

  CHECK(client.Post("/bank/try", "{}").status == 200);
  CHECK(client.Post("/bank/try", "{}").status == 200);
  CHECK(before.CountCalls("/bank/try") == 1);
  CHECK(after.CountCalls("/bank/try") == 2);
}

TEST_CASE("an upstream that is down makes a 502, and the proxy recovers when it is back",
          "[fault_proxy]") {
  ParticipantServer upstream;  // outlives the proxy's connection to it, not to wait for that
  FaultProxy proxy(DeadPort());
  JsonClient client(proxy.port());

  CHECK(client.Post("/bank/try", "{}").status == 502);
  CHECK(client.Get("/bank/try").status == 502);  // the client's connection stays usable

  proxy.SetUpstream(upstream.port());
  CHECK(client.Post("/bank/try", "{}").status == 200);
  CHECK(proxy.Seen("/bank/try") == 3);
}

TEST_CASE("an unreadable upstream answer makes a 502", "[fault_proxy]") {
  CannedUpstream upstream({"garbage\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
                           "HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n"});
  FaultProxy proxy(upstream.port());
  JsonClient client(proxy.port());

  CHECK(client.Get("/garbage").status == 502);
  CHECK(client.Get("/cut-short").status == 502);
  CHECK(client.Get("/bad-length").status == 502);
}

TEST_CASE("answers framed by chunks or by the close reach the client with a Content-Length",
          "[fault_proxy]") {
  const std::string chunked =
      "HTTP/1.1 200 OK\r\nX-Before: 0\r\nTransfer-Encoding: chunked\r\n\r\n"
      "5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\nX-Trailer: 1\r\n\r\n";
  const std::string until_close = "HTTP/1.0 201 Created\r\n\r\nall of it";
  CannedUpstream upstream({chunked, until_close});
  FaultProxy proxy(upstream.port());

  RawClient client(proxy.port());
  client.Send(GetRequest("/chunked"));
  // The trailer is read and dropped, as every reader of the project drops trailers.
  const std::string dechunked =
      "HTTP/1.1 200 OK\r\nX-Before: 0\r\nContent-Length: 12\r\n\r\nhello, world";
  CHECK(client.ReceiveBytes(dechunked.size()) == dechunked);
  // The upstream closed that connection; the proxy opens another for the next request, and
  // ends the client's connection after an answer that the close delimits.
  client.Send(GetRequest("/until-close"));
  CHECK(client.ReceiveUntilClose() ==
        "HTTP/1.1 201 Created\r\nContent-Length: 9\r\nConnection: close\r\n\r\nall of it");
}

TEST_CASE("a chunked request reaches the upstream de-chunked, with a Content-Length",
          "[fault_proxy]") {
  ParticipantServer upstream;
  FaultProxy proxy(upstream.port());
  RawClient client(proxy.port());

  client.Send(
      "POST /bank/try?gid=g1 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
      "Content-Type: application/json\r\n\r\n"
      "4\r\n{\"a\"\r\n3\r\n:1}\r\n0\r\n\r\n");
  fault_proxy::Response response = client.Receive();

  CHECK(response.status == 200);
  std::vector<ReceivedCall> calls = upstream.CallsTo("/bank/try");
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].body == R"({"a":1})");
  CHECK(calls[0].headers.count("Transfer-Encoding") == 0);
  REQUIRE(calls[0].headers.count("Content-Length") == 1);
  CHECK(calls[0].headers.at("Content-Length") == "7");
  CHECK(calls[0].headers.at("Content-Type") == "application/json");
}

TEST_CASE("a HEAD request gets a 501 from the proxy and the connection stays usable",
          "[fault_proxy]") {
  ParticipantServer upstream;
  FaultProxy proxy(upstream.port());
  RawClient client(proxy.port());

  client.Send("HEAD /bank/query HTTP/1.1\r\nHost: x\r\n\r\n");
  CHECK(client.Receive().status == 501);
  client.Send(GetRequest("/bank/query"));
  CHECK(client.Receive().status == 200);

  CHECK(upstream.CountCalls("/bank/query") == 1);
}

TEST_CASE("a bad request gets a 400 and the proxy goes on serving", "[fault_proxy]") {
  ParticipantServer upstream;
  FaultProxy proxy(upstream.port());

  std::string bad =
      GENERATE(std::string("NOT HTTP AT ALL\r\n\r\n"), std::string("hello\n"),
               std::string("GET /x HTTP/1.1\r\nno colon here\r\n\r\n"),
               std::string("POST /x HTTP/1.1\r\nContent-Length: -1\r\n\r\n"),
               std::string("POST /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                           "zz\r\n{}\r\n0\r\n\r\n"),
               std::string("GET http://127.0.0.1/x HTTP/1.1\r\nHost: x\r\n\r\n"),
               std::string("POST /x HTTP/1.1\r\nContent-Length: 99999999999\r\n\r\n"),
               "GET /x HTTP/1.1\r\nX-Big: " + std::string(70 * 1024, 'a') + "\r\n\r\n");
  RawClient client(proxy.port());
  client.Send(bad);
  CHECK(client.ReceiveUntilClose().rfind("HTTP/1.1 400 ", 0) == 0);

  JsonClient good(proxy.port());
  CHECK(good.Post("/bank/try", "{}").status == 200);
  CHECK(upstream.CountCalls("/x") == 0);
}

TEST_CASE("a client that expects 100 Continue gets it, then its answer", "[fault_proxy]") {
  ParticipantServer upstream;
  FaultProxy proxy(upstream.port());
  RawClient client(proxy.port());

  client.Send(
      "POST /bank/try HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n");
  CHECK(client.ReceiveBytes(25) == "HTTP/1.1 100 Continue\r\n\r\n");
  client.Send("{}");
  fault_proxy::Response response = client.Receive();

  CHECK(response.status == 200);
  REQUIRE(upstream.CallsTo("/bank/try").size() == 1);
  CHECK(upstream.CallsTo("/bank/try")[0].body == "{}");
}

TEST_CASE("a client's Connection: close ends the connection after the answer", "[fault_proxy]") {
  ParticipantServer upstream;
  FaultProxy proxy(upstream.port());
  RawClient client(proxy.port());

  client.Send(GetRequest("/bank/query", "Connection: close\r\n"));
  std::string received = client.ReceiveUntilClose();

  CHECK(received.rfind("HTTP/1.1 200", 0) == 0);
  CHECK(received.find(R"({"dtm_result":"SUCCESS"})") != std::string::npos);
}

TEST_CASE("destroying the proxy ends held and delayed requests and open connections",
          "[fault_proxy]") {
  ParticipantServer upstream;
  auto proxy = std::make_unique<FaultProxy>(upstream.port());
  proxy->AddRule({.path = "/held", .fault = Fault::kHold});
  proxy->AddRule({.path = "/slow", .fault = Fault::kDelay, .delay = 1h});
  int port = proxy->port();
  auto held =
      std::async(std::launch::async, [port] { return JsonClient(port).Post("/held", "{}"); });
  auto slow = std::async(std::launch::async, [port] { return JsonClient(port).Get("/slow"); });
  JsonClient idle(port);
  REQUIRE(idle.Get("/warm").status == 200);  // a keep-alive connection, left open
  RawClient silent(port);                    // a connection that never sends
  REQUIRE(proxy->WaitForHeld("/held", 1));
  REQUIRE(proxy->WaitForSeen("/slow", 1));

  proxy.reset();

  CHECK(held.get().status == 0);
  CHECK(slow.get().status == 0);
  CHECK(silent.ReceiveUntilClose().empty());
}

TEST_CASE("destroying the proxy ends a request waiting for an upstream that never answers",
          "[fault_proxy]") {
  boost::asio::io_context io;
  // Listens, so connections complete, but never accepts nor reads: a stopped process.
  tcp::acceptor silent(io, tcp::endpoint(boost::asio::ip::address_v4::loopback(), 0));
  auto proxy = std::make_unique<FaultProxy>(silent.local_endpoint().port());
  int port = proxy->port();
  auto answer = std::async(std::launch::async, [port] { return JsonClient(port).Get("/x"); });
  REQUIRE(proxy->WaitForSeen("/x", 1));

  proxy.reset();

  CHECK(answer.get().status == 0);
}

}  // namespace
}  // namespace settle::testing
