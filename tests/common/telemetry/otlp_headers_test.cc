// The headers sent with every export: OTEL_EXPORTER_OTLP_HEADERS' list and a headers file's
// lines (--otlp-headers-file), and what neither may set.
#include "settle/telemetry/otlp_headers.h"

#include <catch2/catch.hpp>

#include <string>

namespace settle::telemetry {
namespace {

TEST_CASE("OTEL_EXPORTER_OTLP_HEADERS' list is read as name=value pairs, values decoded",
          "[telemetry][otlp]") {
  const auto headers = ParseOtlpHeaders(" api-key = a%20b+c , x-tenant=7,,");
  REQUIRE(headers);
  CHECK(*headers ==
        std::vector<std::pair<std::string, std::string>>{{"api-key", "a b+c"}, {"x-tenant", "7"}});
  CHECK(ParseOtlpHeaders("novalue").status().message() ==
        "entry 1 is not name=value (a header name, '=', its value)");
  // An entry without a name may be a bare key: it is counted, never quoted.
  const Status bare = ParseOtlpHeaders("x-tenant=7, s3cret-key").status();
  CHECK(bare.message().find("entry 2 is not name=value") != std::string::npos);
  CHECK(bare.message().find("s3cret") == std::string::npos);
  CHECK(ParseOtlpHeaders("=s3cret").status().message().find("s3cret") == std::string::npos);
  CHECK(ParseOtlpHeaders("bad name=1").status().code() == StatusCode::kInvalidArgument);
  CHECK(ParseOtlpHeaders("x=a%0D%0AHost: evil").status().message().find("not a valid header") !=
        std::string::npos);
  CHECK(ParseOtlpHeaders("Content-Length=0").status().message().find("set by settled") !=
        std::string::npos);
}

TEST_CASE("a headers file is a header a line, its value as written, comments and blanks skipped",
          "[telemetry][otlp]") {
  const auto headers = ParseOtlpHeaderLines(
      "# the collector's\n"
      "api-key = a b%20c,d\r\n"
      "\n"
      "  # indented\n"
      "\tx-tenant=7=8\n"
      "empty=");
  REQUIRE(headers);
  CHECK(*headers == OtlpHeaders{{"api-key", "a b%20c,d"}, {"x-tenant", "7=8"}, {"empty", ""}});
  CHECK(ParseOtlpHeaderLines("")->empty());
}

TEST_CASE("a bad line of a headers file is named by its number, never quoted",
          "[telemetry][otlp]") {
  CHECK(ParseOtlpHeaderLines("a=1\n\ns3cret\n").status().message() ==
        "line 3: expected name=value");
  CHECK(ParseOtlpHeaderLines("=s3cret").status().message() == "line 1: expected name=value");
  CHECK(ParseOtlpHeaderLines("bad name=s3cret").status().message() ==
        "line 1: expected name=value");
  CHECK(ParseOtlpHeaderLines("# c\nhost=evil").status().message() ==
        "line 2: host is set by settled itself");
  CHECK(ParseOtlpHeaderLines("x=s3\x7f"
                             "cret")
            .status()
            .message() == "line 1: the value of x is not a valid header value");
  CHECK(ParseOtlpHeaderLines("x=1"));
}

}  // namespace
}  // namespace settle::telemetry
