// The participant server: protocol parsing and answers, over real HTTP on 127.0.0.1.
#include "settle/sdk/participant.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <stdexcept>

#include "json_client.h"
#include "raw_connection.h"

namespace settle::sdk {
namespace {

using testing::JsonClient;

const std::string kQuery = "?gid=g1&trans_type=tcc&branch_id=01&op=";

struct Fixture {
  Participant participant;
  int port = 0;
  std::atomic<int> calls{0};
  BranchRequest last;

  void Start() {
    auto started = participant.Start("127.0.0.1", 0);
    REQUIRE(started);
    port = *started;
  }
  BranchHandler Recording(BranchReply reply) {
    return [this, reply](const BranchRequest& r) {
      ++calls;
      last = r;
      return reply;
    };
  }
};

TEST_CASE("a branch handler gets the protocol's parameters, the body and the headers",
          "[sdk][participant]") {
  Fixture f;
  f.participant.OnBranch("/api/TransOut", f.Recording(BranchReply::Success()));
  f.Start();
  JsonClient client(f.port);
  const auto r = client.Post("/api/TransOut" + kQuery + "confirm", R"({"amount": 30})");
  CHECK(r.status == 200);
  CHECK(r.json["dtm_result"] == "SUCCESS");
  CHECK(f.last.gid == "g1");
  CHECK(f.last.trans_type == TransType::kTcc);
  CHECK(f.last.branch_id == "01");
  CHECK(f.last.op == BranchOp::kConfirm);
  CHECK(f.last.body == R"({"amount": 30})");
  CHECK(f.last.path == "/api/TransOut");
  CHECK(f.last.headers.count("Content-Type") == 1);
}

// docs/protocol.md §6.2: 409 FAILURE, not 400, which the coordinator would retry forever (§4.2).
TEST_CASE("a call without the protocol's parameters is a 409 FAILURE naming the parameter",
          "[sdk][participant]") {
  Fixture f;
  f.participant.OnBranch("/b", f.Recording(BranchReply::Success()));
  f.Start();
  JsonClient client(f.port);
  for (const auto& [query, field] : std::vector<std::pair<std::string, std::string>>{
           {"", "gid"},
           {"?gid=a%20b&trans_type=tcc&branch_id=01&op=try", "gid"},
           {"?gid=g&branch_id=01&op=try", "trans_type"},
           {"?gid=g&trans_type=banana&branch_id=01&op=try", "trans_type"},
           {"?gid=g&trans_type=tcc&op=try", "branch_id"},
           {"?gid=g&trans_type=tcc&branch_id=01", "op"},
           {"?gid=g&trans_type=tcc&branch_id=01&op=launch", "op"}}) {
    INFO(query);
    const auto r = client.Post("/b" + query, "{}");
    CHECK(r.status == 409);
    CHECK(r.json["dtm_result"] == "FAILURE");
    CHECK(r.json["message"].get<std::string>().substr(0, field.size()) == field);
  }
  CHECK(f.calls == 0);
}

TEST_CASE("the Node SDK's branch_type=try is accepted in place of op", "[sdk][participant]") {
  Fixture f;
  f.participant.OnTry("/try", f.Recording(BranchReply::Success()));
  f.Start();
  JsonClient client(f.port);
  CHECK(client.Post("/try?gid=g&trans_type=tcc&branch_id=01&branch_type=try", "{}").status == 200);
  CHECK(f.last.op == BranchOp::kTry);
}

TEST_CASE("a URL registered for one op refuses the others", "[sdk][participant]") {
  Fixture f;
  f.participant.OnTry("/try", f.Recording(BranchReply::Success()));
  f.Start();
  JsonClient client(f.port);
  const auto r = client.Post("/try" + kQuery + "cancel", "{}");
  CHECK(r.status == 409);
  CHECK(r.json["dtm_result"] == "FAILURE");
  CHECK_THAT(r.json["message"].get<std::string>(), Catch::StartsWith("op"));
  CHECK(f.calls == 0);
}

TEST_CASE("handler replies become the protocol's answers", "[sdk][participant]") {
  Fixture f;
  f.participant.OnBranch("/ok", f.Recording(BranchReply::Success()))
      .OnBranch("/data", f.Recording(BranchReply::Success(R"({"reserved":30})")))
      .OnBranch("/no", f.Recording(BranchReply::Failure("insufficient funds")))
      .OnBranch("/later", f.Recording(BranchReply::Ongoing("still checking")))
      .OnBranch("/broken", f.Recording(BranchReply::Error(Status::Unavailable("db down"))))
      .OnBranch("/missing", f.Recording(BranchReply::Error(Status::NotFound("no account 7"))))
      .OnBranch("/bug", f.Recording(BranchReply::Error(Status::Internal("bug"))))
      .OnBranch("/bad", f.Recording(BranchReply::Error(Status::InvalidArgument("amount: bad"))))
      .OnBranch("/throws",
                [](const BranchRequest&) -> BranchReply { throw std::runtime_error("boom"); });
  f.Start();
  JsonClient client(f.port);
  const std::string q = kQuery + "try";
  CHECK(client.Post("/ok" + q, "{}").json["dtm_result"] == "SUCCESS");
  CHECK(client.Post("/data" + q, "{}").json["reserved"] == 30);
  const auto no = client.Post("/no" + q, "{}");
  CHECK(no.status == 409);
  CHECK(no.json["dtm_result"] == "FAILURE");
  CHECK(no.json["message"] == "insufficient funds");
  const auto later = client.Post("/later" + q, "{}");
  CHECK(later.status == 425);
  CHECK(later.json["dtm_result"] == "ONGOING");
  // The one mapping of settle/core/http_status.h, as settled's (docs/protocol.md §6.2).
  CHECK(client.Post("/broken" + q, "{}").status == 503);
  const auto missing = client.Post("/missing" + q, "{}");
  CHECK(missing.status == 409);
  CHECK(missing.json["dtm_result"] == "FAILURE");
  CHECK(client.Post("/bug" + q, "{}").status == 500);
  CHECK(client.Post("/bad" + q, "{}").status == 400);
  const auto threw = client.Post("/throws" + q, "{}");
  CHECK(threw.status == 500);
  CHECK_THAT(threw.json["message"].get<std::string>(), Catch::Contains("boom"));
  CHECK(client.Post("/ok" + q, "{}").status == 200);  // still serving
}

TEST_CASE("a participant serves its own plain routes too", "[sdk][participant]") {
  Fixture f;
  f.participant.OnGet(R"(/api/accounts/(\w+))", [](const HttpRequest& r) {
    return HttpReply{200, R"({"path":")" + r.path + R"("})"};
  });
  f.Start();
  JsonClient client(f.port);
  CHECK(client.Get("/api/accounts/7").json["path"] == "/api/accounts/7");
  CHECK(client.Get("/nowhere").status == 404);
}

TEST_CASE("a plain route whose handler throws answers 500 naming why, and serving goes on",
          "[sdk][participant]") {
  Fixture f;
  f.participant.OnGet("/api/boom", [](const HttpRequest&) -> HttpReply {
    throw std::runtime_error("ledger exploded");
  });
  f.participant.OnGet("/api/fine", [](const HttpRequest&) { return HttpReply{200, "{}"}; });
  f.Start();
  JsonClient client(f.port);
  const auto threw = client.Get("/api/boom");
  CHECK(threw.status == 500);
  CHECK(threw.json["message"] == "handler threw: ledger exploded");
  CHECK(client.Get("/api/fine").status == 200);
}

TEST_CASE("a known path asked with another method gets 405 and the methods it takes",
          "[sdk][participant]") {
  Fixture f;
  f.participant.OnConfirm("/api/TransOutConfirm", f.Recording(BranchReply::Success()));
  f.participant.OnGet(R"(/api/accounts/(\w+))", [](const HttpRequest&) {
    return HttpReply{200, "{}"};
  });
  f.Start();
  JsonClient client(f.port);
  testing::RawConnection raw(f.port);
  REQUIRE(raw.Send("DELETE /api/TransOutConfirm" + kQuery + "confirm HTTP/1.1\r\nHost: p\r\n\r\n"));
  const testing::RawConnection::Answer wrong = raw.Read();
  CHECK(wrong.status == 405);
  CHECK(*wrong.Header("Allow") == "GET, POST");
  const auto plain = client.Post("/api/accounts/7", "{}");
  CHECK(plain.status == 405);
  CHECK(plain.headers.find("Allow")->second == "GET");
  CHECK(f.calls == 0);
}

TEST_CASE(
    "the participant's server frames requests strictly: an ambiguous one gets one 4xx, "
    "the connection closes, and the request smuggled behind it never runs",
    "[sdk][participant][framing]") {
  Fixture f;
  f.participant.OnBranch("/api/TransOut", f.Recording(BranchReply::Success()));
  f.Start();
  const std::string smuggled =
      "POST /api/TransOut" + kQuery + "try HTTP/1.1\r\nHost: p\r\nContent-Length: 2\r\n\r\n{}";
  for (const std::string& head :
       {std::string("POST /api/TransOut" + kQuery +
                    "try HTTP/1.1\r\nHost: p\r\n"
                    "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
        std::string("POST /api/TransOut" + kQuery +
                    "try HTTP/1.1\r\nHost: p\r\n"
                    "Transfer-Encoding: chunked\r\n\r\n2\n{}\r\n0\r\n\r\n"),
        std::string("POST /api/TransOut" + kQuery +
                    "try HTTP/1.1\r\nHost: p\r\n"
                    "Transfer-Encoding: identity\r\n\r\n"),
        std::string("GET /api/TransOut" + kQuery + "try HTTP/1.1\r\n\r\n"),
        std::string("GET /api/TransOut" + kQuery + "try HTTP/1.1\r\nHost: p\r\nHost: q\r\n\r\n")}) {
    INFO(head);
    testing::RawConnection raw(f.port);
    REQUIRE(raw.Send(head + smuggled));
    const testing::RawConnection::Answer answer = raw.Read();
    CHECK(answer.status == 400);
    CHECK(*answer.Header("Connection") == "close");
    CHECK(raw.ClosedWithin());
  }
  CHECK(f.calls == 0);
}

TEST_CASE("a participant stopped right after it started does not hang", "[sdk][participant]") {
  for (int i = 0; i < 20; ++i) {
    Participant p;
    REQUIRE(p.Start("127.0.0.1", 0));
    p.Stop();
  }
}

}  // namespace
}  // namespace settle::sdk
