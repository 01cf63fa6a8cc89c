#include "settle/api/refusal_log.h"

#include <catch2/catch.hpp>

#include <string>

#include "fake_clock.h"
#include "log_capture.h"

namespace settle::api {
namespace {

using testing::FakeClock;
using testing::LogCapture;
using namespace std::chrono_literals;

Authentication::Refusal UnknownToken() {
  return {true, "authorization: a bearer token is required; none or an unknown one was sent",
          RefusalReason::kUnknownToken};
}

TEST_CASE("a refusal is logged with its port, address, action, status and reason, and counted",
          "[auth][refusals]") {
  LogCapture log;
  FakeClock clock;
  RefusalLog refusals(clock);
  refusals.Refused(ApiPort::kHttp, "10.0.0.7", "POST /api/settle/submit", UnknownToken());
  refusals.Refused(
      ApiPort::kGrpc, "10.0.0.8", "Submit",
      {false, "authorization: this token ('ci') grants read access; Submit needs client",
       RefusalReason::kAccessTooLow});
  const std::vector<std::string> lines = log.LinesWith("refused");
  REQUIRE(lines.size() == 2);
  CHECK_THAT(lines[0], Catch::Contains("HTTP API refused POST /api/settle/submit from 10.0.0.7: "
                                       "401 reason=unknown_token: a bearer token is required"));
  CHECK_THAT(lines[1], Catch::Contains("gRPC API refused Submit from 10.0.0.8: 403 "
                                       "reason=access_too_low: this token ('ci') grants read"));
  CHECK(refusals.refused(ApiPort::kHttp, RefusalReason::kUnknownToken) == 1);
  CHECK(refusals.refused(ApiPort::kGrpc, RefusalReason::kAccessTooLow) == 1);
  CHECK(refusals.refused(ApiPort::kGrpc, RefusalReason::kUnknownToken) == 0);
  CHECK(refusals.refused(ApiPort::kHttp, RefusalReason::kAccessTooLow) == 0);
}

TEST_CASE(
    "a flood of refusals logs a few lines per reason and port, then says how many it left out",
    "[auth][refusals]") {
  LogCapture log;
  FakeClock clock;
  RefusalLog refusals(clock, {.lines = 10, .window = Duration(60'000)});
  for (int i = 0; i < 1000; ++i) {
    refusals.Refused(ApiPort::kHttp, "203.0.113.9", "GET /api/settle/all", UnknownToken());
  }
  // Another reason, and the same on the other port, are not drowned by the flood.
  refusals.Refused(ApiPort::kHttp, "10.0.0.7", "GET /api/settle/all",
                   {true, "authorization: nothing", RefusalReason::kNoCredentials});
  refusals.Refused(ApiPort::kGrpc, "10.0.0.7", "Submit", UnknownToken());
  CHECK(refusals.refused(ApiPort::kHttp, RefusalReason::kUnknownToken) == 1000);
  CHECK(log.LinesWith("HTTP API refused GET /api/settle/all from 203.0.113.9").size() == 10);
  CHECK_THAT(log.LinesWith("HTTP API refused")[9],
             Catch::Contains("only counted for the next 60 s"));
  CHECK(log.LinesWith("reason=no_credentials").size() == 1);
  CHECK(log.LinesWith("gRPC API refused Submit").size() == 1);

  refusals.Flush();  // the window has not ended: nothing to say yet
  CHECK(log.LinesWith("were not logged").empty());
  clock.Advance(60s);
  refusals.Flush();
  const std::vector<std::string> told = log.LinesWith("were not logged");
  REQUIRE(told.size() == 1);
  CHECK_THAT(told[0], Catch::Contains("HTTP API: 990 more refusals with reason=unknown_token in "
                                      "60 s were not logged"));
  refusals.Flush();
  CHECK(log.LinesWith("were not logged").size() == 1);
}

TEST_CASE("failed handshakes are logged with the peer's address and reason, rate-limited, counted",
          "[auth][refusals][tls]") {
  LogCapture log;
  FakeClock clock;
  RefusalLog refusals(clock, {.lines = 3, .window = Duration(10'000)});
  for (int i = 0; i < 50; ++i) {
    refusals.HandshakeFailed(ApiPort::kHttp, "198.51.100.4",
                             "peer did not return a certificate (SSL routines)");
  }
  CHECK(refusals.handshake_failures(ApiPort::kHttp) == 50);
  const std::vector<std::string> lines = log.LinesWith("TLS handshake from 198.51.100.4 failed");
  REQUIRE(lines.size() == 3);
  CHECK_THAT(lines[0], Catch::Contains("peer did not return a certificate"));
  clock.Advance(10s);
  refusals.HandshakeFailed(ApiPort::kHttp, "198.51.100.5", "http request (SSL routines)");
  CHECK(log.LinesWith("47 more failed TLS handshakes in 10 s were not logged").size() == 1);
  CHECK(log.LinesWith("TLS handshake from 198.51.100.5 failed: http request").size() == 1);
  // The gRPC port's, which gRPC reports without the peer, are counted and limited apart.
  for (int i = 0; i < 5; ++i)
    refusals.HandshakeFailed(ApiPort::kGrpc, "", "certificate verify failed");
  CHECK(refusals.handshake_failures(ApiPort::kGrpc) == 5);
  CHECK(refusals.handshake_failures(ApiPort::kHttp) == 51);
  CHECK(log.LinesWith("gRPC API: TLS handshake from an address gRPC does not name failed: "
                      "certificate verify failed")
            .size() == 3);
}

}  // namespace
}  // namespace settle::api
