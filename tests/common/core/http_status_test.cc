#include "settle/core/http_status.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <string>

namespace settle {
namespace {

nlohmann::json Body(const HttpAnswer& a) { return nlohmann::json::parse(a.body); }

// docs/protocol.md §1.2 (settled's answers) and §6.2 (the SDK's participant server): one row per
// StatusCode, with the whole answer.
struct Row {
  Status status;
  int http;
  std::string body;
  const char* source;
};

TEST_CASE("each status maps to the protocol's HTTP answer", "[common][http-status]") {
  const Row rows[] = {
      {Status::Ok(), 200, R"({"dtm_result":"SUCCESS"})", "§1.2 done, §6.2 Success()"},
      {Status::InvalidArgument("gid: required"), 400, R"({"message":"gid: required"})",
       "§1.2 malformed request"},
      {Status::NotFound("no transaction with gid g"), 409,
       R"({"dtm_result":"FAILURE","message":"no transaction with gid g"})", "§1.2 unknown gid"},
      {Status::AlreadyExists("gid g exists"), 409,
       R"({"dtm_result":"FAILURE","message":"gid g exists"})", "§1.2 409"},
      {Status::Conflict("gid g is failed"), 409,
       R"({"dtm_result":"FAILURE","message":"gid g is failed"})",
       "§1.2 a status that forbids the request, §6.2 Failure()"},
      {Status::Pending("gid g is submitted"), 425,
       R"({"dtm_result":"ONGOING","message":"gid g is submitted"})",
       "§1.2 wait_result unfinished, §6.2 Ongoing()"},
      {Status::Unavailable("storage unavailable"), 503, R"({"message":"storage unavailable"})",
       "§1.2 storage unavailable, shutting down"},
      {Status::Internal("internal error: boom"), 500, R"({"message":"internal error: boom"})",
       "§1.2 a bug"},
  };
  for (const Row& row : rows) {
    CAPTURE(row.status.ToString(), row.source);
    const HttpAnswer answer = ToHttpAnswer(row.status);
    CHECK(answer.status == row.http);
    CHECK(answer.body == row.body);
  }
}

TEST_CASE("a message with invalid UTF-8 still makes a valid JSON answer", "[common][http-status]") {
  const HttpAnswer a = ToHttpAnswer(Status::Conflict("participant said \xff\xfe"));
  CHECK_NOTHROW(Body(a));
}

TEST_CASE("JsonAnswer is a 200 with the body as it is", "[common][http-status]") {
  const HttpAnswer a = JsonAnswer(R"({"gid":"g1"})");
  CHECK(a.status == 200);
  CHECK(a.body == R"({"gid":"g1"})");
}

}  // namespace
}  // namespace settle
