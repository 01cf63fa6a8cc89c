#include "settle/api/http_status.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

namespace settle::coordinator {
namespace {

nlohmann::json Body(const HttpAnswer& a) { return nlohmann::json::parse(a.body); }

TEST_CASE("each status maps to the protocol's HTTP answer", "[http-status]") {
  const HttpAnswer ok = ToHttpAnswer(Status::Ok());
  CHECK(ok.status == 200);
  CHECK(Body(ok) == nlohmann::json{{"dtm_result", "SUCCESS"}});

  CHECK(ToHttpAnswer(Status::InvalidArgument("gid: required")).status == 400);
  CHECK(Body(ToHttpAnswer(Status::InvalidArgument("gid: required")))["message"] == "gid: required");
  for (const Status& refused :
       {Status::Conflict("gid g is failed"), Status::NotFound("no transaction with gid g"),
        Status::AlreadyExists("gid g exists")}) {
    const HttpAnswer a = ToHttpAnswer(refused);
    CHECK(a.status == 409);
    CHECK(Body(a)["dtm_result"] == "FAILURE");
    CHECK(Body(a)["message"] == refused.message());
  }
  const HttpAnswer pending = ToHttpAnswer(Status::Pending("gid g is submitted"));
  CHECK(pending.status == 425);
  CHECK(Body(pending)["dtm_result"] == "ONGOING");
  const HttpAnswer unavailable = ToHttpAnswer(Status::Unavailable("disk full"));
  CHECK(unavailable.status == 503);
  CHECK_FALSE(Body(unavailable).contains("dtm_result"));
  CHECK(ToHttpAnswer(Status::Internal("bug")).status == 500);
}

TEST_CASE("a message with invalid UTF-8 still makes a valid JSON answer", "[http-status]") {
  const HttpAnswer a = ToHttpAnswer(Status::Conflict("participant said \xff\xfe"));
  CHECK_NOTHROW(Body(a));
}

}  // namespace
}  // namespace settle::coordinator
