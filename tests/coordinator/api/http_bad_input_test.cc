// Bad input over real HTTP: a 400 naming the field, nothing stored, the server keeps serving.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "in_process_settled.h"
#include "raw_connection.h"

namespace settle {
namespace {

using nlohmann::json;
using testing::InProcessSettled;

struct BadCase {
  std::string route;
  std::string body;
  std::string field;  // the field the 400 must name
};

const std::string kOkSteps =
    R"("steps":[{"action":"http://127.0.0.1:9/a","compensate":"http://127.0.0.1:9/c"}],)";

std::vector<BadCase> BadCases() {
  return {
      {"prepare", "", "body"},
      {"prepare", "{\"gid\":\"g\",", "body"},
      {"prepare", "[\"gid\"]", "body"},
      {"prepare", "null", "body"},
      {"prepare",
       R"({"gid":"bad-1","trans_type":"tcc","x":")"
       "\xff\xfe"
       R"("})",
       "body"},
      {"prepare", std::string(5000, '[') + std::string(5000, ']'), "body"},
      {"prepare", R"({"trans_type":"tcc"})", "gid"},
      {"prepare", R"({"gid":"bad gid","trans_type":"tcc"})", "gid"},
      {"prepare", R"({"gid":")" + std::string(200, 'g') + R"(","trans_type":"tcc"})", "gid"},
      {"prepare", R"({"gid":12,"trans_type":"tcc"})", "gid"},
      {"prepare", R"({"gid":"bad-2"})", "trans_type"},
      {"prepare", R"({"gid":"bad-3","trans_type":"workflow"})", "trans_type"},
      {"prepare", R"({"gid":"bad-3","trans_type":"msg"})", "steps"},
      {"prepare", R"({"gid":"bad-3","trans_type":"msg","steps":[{"action":"http://p/a"}],
        "payloads":["{}"]})",
       "query_prepared"},
      {"submit", R"({"gid":"bad-4","trans_type":"msg","steps":[{"action":"topic://a b"}],
        "payloads":["{}"]})",
       "steps[0].action"},
      {"submit", R"({"gid":"bad-5","trans_type":"workflow"})", "req_extra.status"},
      {"prepareWorkflow", R"({"gid":"bad-5","trans_type":"workflow","custom_data":"{}"})",
       "custom_data.name"},
      {"registerBranch", R"({"gid":"bad-5","trans_type":"workflow","branch_id":"01","op":"x"})",
       "op"},
      {"submit", R"({"gid":"bad-6","trans_type":"banana"})", "trans_type"},
      {"prepare", R"({"gid":"bad-7","trans_type":"tcc","timeout_to_fail":"35"})",
       "timeout_to_fail"},
      {"prepare", R"({"gid":"bad-8","trans_type":"tcc","wait_result":1})", "wait_result"},
      {"prepare", R"({"gid":"bad-9","trans_type":"tcc","branch_headers":{"X":"a\nB: c"}})",
       "branch_headers.X"},
      {"registerBranch",
       R"({"gid":"bad-10","trans_type":"tcc","branch_id":"01","confirm":"ftp://p/c","cancel":"http://p/x"})",
       "confirm"},
      {"registerBranch",
       R"js({"gid":"bad-11","trans_type":"tcc","branch_id":"01","confirm":"http://p/c","cancel":"javascript:alert(1)"})js",
       "cancel"},
      {"registerBranch",
       R"({"gid":"bad-12","trans_type":"tcc","confirm":"http://p/c","cancel":"http://p/x"})",
       "branch_id"},
      {"submit", R"({"gid":"bad-13","trans_type":"saga","payloads":[]})", "steps"},
      {"submit", R"({"gid":"bad-14","trans_type":"saga",)" + kOkSteps + R"("payloads":["",""]})",
       "payloads"},
      {"submit", R"({"gid":"bad-15","trans_type":"saga",)" + kOkSteps + R"("payloads":[42]})",
       "payloads[0]"},
      {"submit",
       R"({"gid":"bad-16","trans_type":"saga","steps":[{"action":"ftp://p/a"}],"payloads":[""]})",
       "steps[0].action"},
      {"submit",
       R"({"gid":"bad-17","trans_type":"saga",)" + kOkSteps +
           R"("payloads":[""],"custom_data":"{\"orders\":{\"0\":[3]}}"})",
       "custom_data.orders.0"},
      {"abort", R"({"gid":"bad-18","trans_type":"saga"})", "trans_type"},
      {"forceStop", R"({"gid":""})", "gid"},
      {"resetNextCronTime", R"({})", "gid"},
      {"resetNextCronTime", R"({"gid":"a/b"})", "gid"},
      {"registerXaBranch", R"({"gid":"bad-19","trans_type":"xa","branch_id":"01"})", "url"},
      {"subscribe", R"({"topic":"orders","url":"ftp://x"})", "url"},
      {"unsubscribe", R"({"url":"http://p/x"})", "topic"},
  };
}

TEST_CASE("bad requests get a 400 naming the field, and nothing is stored", "[http][bad-input]") {
  InProcessSettled s;
  for (const BadCase& bad : BadCases()) {
    for (const char* prefix : {"/api/settle/", "/api/dtmsvr/"}) {
      INFO(prefix << bad.route << " " << bad.body.substr(0, 200));
      const auto r = s.client().Post(prefix + bad.route, bad.body);
      CHECK(r.status == 400);
      REQUIRE(r.json.is_object());
      const std::string message = r.json["message"].get<std::string>();
      CHECK(message.substr(0, message.find(':')) == bad.field);
    }
  }
  const auto all = s.client().Get("/api/settle/all");
  CHECK(all.json["transactions"].empty());
  CHECK(s.client().Get("/api/ping").status == 200);
}

TEST_CASE("bad query strings get a 400 naming the parameter", "[http][bad-input]") {
  InProcessSettled s;
  for (const auto& [path, field] : std::vector<std::pair<std::string, std::string>>{
           {"/api/settle/query", "gid"},
           {"/api/settle/query?gid=a%2Fb", "gid"},
           {"/api/settle/all?limit=0", "limit"},
           {"/api/settle/all?limit=100000", "limit"},
           {"/api/settle/all?status=done", "status"},
           {"/api/settle/all?position=abc", "position"}}) {
    INFO(path);
    const auto r = s.client().Get(path);
    CHECK(r.status == 400);
    CHECK(r.json["message"].get<std::string>().substr(0, field.size()) == field);
  }
}

TEST_CASE("a body over 1 MiB is refused with a 413 and the server keeps serving",
          "[http][bad-input]") {
  InProcessSettled s;
  json saga = {{"gid", "too-big"},
               {"trans_type", "saga"},
               {"steps", {{{"action", "http://127.0.0.1:9/a"}}}},
               {"payloads", {std::string(2 << 20, 'x')}}};
  const auto r = s.Call("submit", saga);
  CHECK(r.status == 413);
  CHECK_THAT(r.json["message"].get<std::string>(), Catch::StartsWith("body: larger than"));
  CHECK(s.StatusOf("too-big").empty());
  testing::JsonClient fresh(s.port());
  CHECK(fresh.Get("/api/ping").status == 200);
}

TEST_CASE(
    "an unknown route gets a JSON 404, a known one asked with another method a 405 with "
    "Allow",
    "[http][bad-input]") {
  InProcessSettled s;
  const auto unknown = s.client().Post("/api/settle/launchMissiles", "{}");
  CHECK(unknown.status == 404);
  CHECK(unknown.json["message"].is_string());
  const auto wrong_method = s.client().Get("/api/settle/submit");
  CHECK(wrong_method.status == 405);
  CHECK(wrong_method.headers.find("Allow")->second == "POST");
  CHECK_THAT(wrong_method.json["message"].get<std::string>(), Catch::Contains("not allowed"));
  CHECK(s.client().Post("/api/settle/query?gid=g", "{}").headers.find("Allow")->second == "GET");
}

TEST_CASE(
    "an ambiguous or malformed request gets one 4xx and the connection closes, what was "
    "smuggled behind it is never served",
    "[http][bad-input][framing]") {
  InProcessSettled s;
  const std::string smuggled_body = R"({"gid":"smuggled","trans_type":"tcc"})";
  const std::string smuggled = "POST /api/settle/prepare HTTP/1.1\r\nHost: x\r\nContent-Length: " +
                               std::to_string(smuggled_body.size()) + "\r\n\r\n" + smuggled_body;
  struct Case {
    const char* why;
    std::string head;
    int status;
  };
  const std::vector<Case> cases = {
      {"Content-Length with Transfer-Encoding",
       "POST /api/settle/prepare HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
       "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
       400},
      {"chunked not the final coding",
       "POST /api/settle/prepare HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, gzip\r\n\r\n",
       400},
      {"an unknown coding",
       "POST /api/settle/prepare HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 400},
      {"a bare LF in a chunk line",
       "POST /api/settle/prepare HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: "
       "chunked\r\n\r\n2\n{}\r\n0\r\n\r\n",
       400},
      {"conflicting Content-Length",
       "POST /api/settle/prepare HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: "
       "3\r\n\r\n{}",
       400},
      {"no Host", "GET /api/ping HTTP/1.1\r\n\r\n", 400},
      {"two Hosts", "GET /api/ping HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n", 400},
      {"obsolete line folding", "GET /api/ping HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n 2\r\n\r\n", 400},
      {"whitespace before a colon", "GET /api/ping HTTP/1.1\r\nHost : x\r\n\r\n", 400},
      {"a head over the limit",
       "GET /api/ping HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(20000, 'a') + "\r\n\r\n", 431},
      {"HTTP/2.0", "GET /api/ping HTTP/2.0\r\nHost: x\r\n\r\n", 505},
  };
  for (const Case& c : cases) {
    INFO(c.why);
    testing::RawConnection raw(s.port());
    REQUIRE(raw.Send(c.head + smuggled));
    const testing::RawConnection::Answer answer = raw.Read();
    CHECK(answer.status == c.status);
    CHECK(*answer.Header("Connection") == "close");
    CHECK(nlohmann::json::parse(answer.body)["message"].is_string());
    CHECK(raw.ClosedWithin());
  }
  CHECK(s.StatusOf("smuggled").empty());
  CHECK(s.client().Get("/api/ping").status == 200);
}

TEST_CASE("pipelined requests are answered in order, an HTTP/1.0 client is answered and closed",
          "[http][framing]") {
  InProcessSettled s;
  testing::RawConnection raw(s.port());
  const std::string prepare = R"({"gid":"piped","trans_type":"tcc"})";
  REQUIRE(raw.Send(
      "GET /api/ping HTTP/1.1\r\nHost: x\r\n\r\n"
      "POST /api/settle/prepare HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" +
      [&] {
        std::ostringstream hex;
        hex << std::hex << prepare.size();
        return hex.str();
      }() +
      ";ext=1\r\n" + prepare + "\r\n0\r\nX-Trailer: t\r\n\r\n" +
      "GET /api/settle/query?gid=piped HTTP/1.1\r\nHost: x\r\n\r\n"));
  CHECK(raw.Read().body == R"({"msg":"pong"})");
  CHECK(raw.Read().status == 200);
  const testing::RawConnection::Answer query = raw.Read();
  CHECK(nlohmann::json::parse(query.body)["transaction"]["status"] == "prepared");

  testing::RawConnection old(s.port());
  REQUIRE(old.Send("GET /api/ping HTTP/1.0\r\n\r\n"));
  CHECK(old.Read().status == 200);
  CHECK(old.ClosedWithin());
}

// Sends raw bytes on a new connection and closes it without reading an answer.
void SendRaw(int port, const std::string& bytes) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  (void)!write(fd, bytes.data(), bytes.size());
  close(fd);
}

TEST_CASE("truncated and garbage requests do not hurt the server", "[http][bad-input]") {
  InProcessSettled s;
  const std::string body = R"({"gid":"half-sent","trans_type":"tcc"})";
  SendRaw(s.port(),
          "POST /api/settle/prepare HTTP/1.1\r\nHost: x\r\nContent-Length: 400\r\n\r\n" + body);
  SendRaw(s.port(), "POST /api/settle/prepare HTTP/1.1\r\nHost: x\r\nContent-Le");
  SendRaw(s.port(), std::string("\x00\x01\x02\xff garbage \r\n\r\n", 17));
  SendRaw(s.port(), "GET /" + std::string(100000, 'a') + " HTTP/1.1\r\n\r\n");
  testing::JsonClient fresh(s.port());
  CHECK(fresh.Get("/api/ping").status == 200);
  CHECK(s.StatusOf("half-sent").empty());  // the truncated prepare stored nothing
  CHECK(s.Call("prepare", {{"gid", "after-garbage"}, {"trans_type", "tcc"}}).status == 200);
}

}  // namespace
}  // namespace settle
