// settled's log lines as a log pipeline reads them: the key=value fields of a message, and the
// text and JSON formats (--log-format), both in UTC.
#include "settle/app/log_format.h"

#include <spdlog/details/log_msg.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <string>

#include "settle/app/grpc_log.h"
#include "settle/app/log_fields.h"
#include "settle/core/log_text.h"

namespace settle::app {
namespace {

using nlohmann::json;

// One line as `format` writes `message` at `level`, logged at 2026-11-28T10:12:24.601Z.
std::string Formatted(LogFormat format, spdlog::level::level_enum level,
                      const std::string& message) {
  spdlog::details::log_msg msg("settled", level, message);
  msg.time = spdlog::log_clock::time_point(std::chrono::milliseconds(1'795'860'744'601));
  spdlog::memory_buf_t out;
  MakeLogFormatter(format)->format(msg, out);
  return std::string(out.data(), out.size());
}

TEST_CASE("a message's key=value fields are read in order, quoted values unescaped", "[logging]") {
  const std::vector<LogField> fields = ParseLogFields(
      "gid=order-1 branch=01 op=action outcome=failure attempts=3 retry_at=2026-11-28T10:00:01Z "
      "error=" +
      LogValue("connection refused, \"x\"\n") + " (job=job-7); actor=alice,");
  REQUIRE(fields.size() == 9);
  CHECK(fields[0].key == "gid");
  CHECK(fields[0].value == "order-1");
  CHECK(fields[4].value == "3");
  CHECK(fields[5].value == "2026-11-28T10:00:01Z");
  CHECK(fields[6].key == "error");
  CHECK(fields[6].quoted);
  CHECK(fields[6].value == "connection refused, \"x\"\n");
  CHECK(fields[7].key == "job");
  CHECK(fields[7].value == "job-7");
  CHECK(fields[8].key == "actor");
  CHECK(fields[8].value == "alice");
}

TEST_CASE(
    "a quoted value from outside cannot pose as a field, and a cut one is marked, whatever it "
    "holds",
    "[logging]") {
  // A client's reason that holds what would be another gid's field.
  const std::string forged = "refund gid=victim-9 status=succeed";
  const std::vector<LogField> fields =
      ParseLogFields("gid=order-1 force-stopped by actor=bob; reason=" + LogValue(forged));
  REQUIRE(fields.size() == 3);
  CHECK(fields[0].value == "order-1");
  CHECK(fields[2].key == "reason");
  CHECK(fields[2].value == forged);
  // Quoted text that is not a key's value is skipped whole.
  CHECK(ParseLogFields("subscribed " + LogValue("x gid=victim") + " to topic=t").size() == 1);
  // A value cut by LogValue ends in "...", its length mark dropped, and what follows is read.
  const std::vector<LogField> cut =
      ParseLogFields("reason=" + LogValue(std::string(300, 'a'), 8) + " gid=g");
  REQUIRE(cut.size() == 2);
  CHECK(cut[0].value == "aaaaaaaa...");
  CHECK(cut[1].value == "g");
  // Not keys: upper case, inside a word, an '=' with nothing before it, a key seen again.
  CHECK(ParseLogFields("GID=x a-b=c =d url=http://h/?x=1 gid=1 gid=2").size() == 2);
  CHECK(ParseLogFields("").empty());
  CHECK(ParseLogFields("gid=").front().value.empty());
}

TEST_CASE("the text format writes the time in UTC with a Z, the level and the message",
          "[logging]") {
  CHECK(Formatted(LogFormat::kText, spdlog::level::warn, "gid=g stuck") ==
        "2026-11-28T10:12:24.601Z warning gid=g stuck\n");
}

TEST_CASE(
    "the JSON format writes one object per line: time in UTC, level, the whole message and each "
    "field",
    "[logging]") {
  const std::string line =
      Formatted(LogFormat::kJson, spdlog::level::info,
                "gid=order-1 trans_type=saga submitted steps=2 reason=" + LogValue("a \"b\"") +
                    " level=x code=007");
  REQUIRE(line.back() == '\n');
  CHECK(line.find('\n') == line.size() - 1);
  const json parsed = json::parse(line);
  CHECK(parsed["time"] == "2026-11-28T10:12:24.601Z");
  CHECK(parsed["level"] == "info");
  CHECK(parsed["message"] ==
        "gid=order-1 trans_type=saga submitted steps=2 reason=\"a \\\"b\\\"\" level=x code=007");
  CHECK(parsed["gid"] == "order-1");
  CHECK(parsed["trans_type"] == "saga");
  CHECK(parsed["steps"] == 2);
  CHECK(parsed["reason"] == "a \"b\"");
  CHECK(parsed["code"] == "007");  // not a number as written
  // A field named as a member of the line stays in the message.
  CHECK(parsed["level"] == "info");
  CHECK_THAT(line, Catch::StartsWith(
                       R"({"time":"2026-11-28T10:12:24.601Z","level":"info","message":"gid=)"));
  // Bytes that are not UTF-8 are replaced, the line kept.
  CHECK_NOTHROW(json::parse(Formatted(LogFormat::kJson, spdlog::level::err, "bad \xff\xfe")));
  CHECK(ParseLogFormat("json") == LogFormat::kJson);
  CHECK(ParseLogFormat("text") == LogFormat::kText);
  CHECK_FALSE(ParseLogFormat("xml"));
}

TEST_CASE("a failed handshake gRPC logs is told apart from its other lines, with its reason",
          "[logging][tls]") {
  CHECK(GrpcHandshakeFailure("src/core/tsi/ssl_transport_security.cc",
                             "Handshake failed with fatal error SSL_ERROR_SSL: "
                             "error:0A000086:SSL routines::certificate verify failed.") ==
        "certificate verify failed");
  CHECK(GrpcHandshakeFailure("/build/grpc/src/core/tsi/ssl_transport_security.cc",
                             "Handshake failed with fatal error SSL_ERROR_SSL: "
                             "error:0A00010B:SSL routines::wrong version number") ==
        "wrong version number");
  CHECK(GrpcHandshakeFailure("src/core/lib/surface/server.cc", "Handshake failed").empty());
  CHECK(GrpcHandshakeFailure("ssl_transport_security.cc", "Something else").empty());
}

}  // namespace
}  // namespace settle::app
