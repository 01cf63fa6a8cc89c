// How TransOptions are stored: the JSON in trans_global.options.
#include "options_codec.h"

#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

namespace settle::storage {
namespace {

using namespace std::chrono_literals;

TEST_CASE("options round-trip through their JSON encoding", "[storage]") {
  TransOptions o;
  o.timeout_to_fail = 35s;
  o.request_timeout = 3s;
  o.retry_interval = 250ms;
  o.retry_limit = 4;
  o.concurrent = true;
  o.orders = {{1, {0}}, {3, {1, 2}}, {10, {}}};
  o.branch_headers = {{"Authorization", "Bearer a\"b"}, {"X-Ünicode", "wert ✓"}};
  o.custom_data = R"({"concurrent":true,"orders":{"1":[0]}})";
  o.request_fingerprint = "trans_type=saga\nsteps=1\nsteps[0]=#0123456789abcdef\n";

  Result<std::string> encoded = EncodeOptions(o);
  REQUIRE(encoded);
  Result<TransOptions> decoded = DecodeOptions(*encoded);

  REQUIRE(decoded);
  CHECK(*decoded == o);
}

TEST_CASE(
    "the stored text is the one a JSON document of the options dumps: members in name order, "
    "orders' steps as names (10 before 2)",
    "[storage]") {
  TransOptions o;
  o.timeout_to_fail = 35s;
  o.request_timeout = 3s;
  o.retry_interval = 250ms;
  o.retry_limit = 4;
  o.delay = 2s;
  o.concurrent = true;
  o.orders = {{2, {0, 1}}, {10, {}}, {1, {0}}};
  o.branch_headers = {{"B", "two"}, {"A", "one \"quoted\"\n"}};
  o.custom_data = "\x01{\"name\":\"wf\"}\t";
  o.pause_after = 3;
  o.request_fingerprint = "trans_type=saga\n";
  o.workflow_name = "wf ✓";
  for (bool minimal : {false, true}) {
    const TransOptions options = minimal ? TransOptions{} : o;
    Result<std::string> encoded = EncodeOptions(options);
    REQUIRE(encoded);
    INFO(*encoded);
    CHECK(nlohmann::json::parse(*encoded).dump() == *encoded);
    Result<TransOptions> decoded = DecodeOptions(*encoded);
    REQUIRE(decoded);
    CHECK(*decoded == options);
  }
}

TEST_CASE("options are stored as readable JSON with durations in milliseconds", "[storage]") {
  TransOptions o;
  o.timeout_to_fail = 35s;
  o.orders = {{1, {0}}};
  o.branch_headers = {{"k", "v"}};

  Result<std::string> encoded = EncodeOptions(o);

  REQUIRE(encoded);
  CHECK_THAT(*encoded, Catch::Contains(R"("timeout_to_fail":35000)") &&
                           Catch::Contains(R"("orders":{"1":[0]})") &&
                           Catch::Contains(R"("branch_headers":{"k":"v"})"));
}

TEST_CASE("options stored before fingerprints decode with none, and none is not written",
          "[storage]") {
  // As an earlier version wrote them.
  Result<TransOptions> old = DecodeOptions(
      R"({"timeout_to_fail":0,"request_timeout":3000,"retry_interval":1000,"retry_limit":0,)"
      R"("delay":0,"concurrent":false,"orders":{},"branch_headers":{},"custom_data":""})");
  REQUIRE(old);
  CHECK(old->request_fingerprint.empty());
  Result<std::string> encoded = EncodeOptions(*old);
  REQUIRE(encoded);
  CHECK(encoded->find("request_fingerprint") == std::string::npos);
  CHECK_FALSE(DecodeOptions(R"({"request_fingerprint":7})"));
}

TEST_CASE("missing and null option fields decode as defaults", "[storage]") {
  Result<TransOptions> empty = DecodeOptions("{}");
  REQUIRE(empty);
  CHECK(*empty == TransOptions{});

  Result<TransOptions> nulls =
      DecodeOptions(R"({"retry_limit":null,"orders":null,"custom_data":null,"unknown":[1]})");
  REQUIRE(nulls);
  CHECK(*nulls == TransOptions{});
}

TEST_CASE("corrupt stored options decode to an Internal status, never an exception", "[storage]") {
  const char* corrupt[] = {
      "",
      "not json",
      "[1,2]",
      R"({"timeout_to_fail":"35s"})",
      R"({"retry_limit":1.5})",
      R"({"retry_limit":99999999999})",
      R"({"concurrent":"yes"})",
      R"({"orders":[0]})",
      R"({"orders":{"one":[0]}})",
      R"({"orders":{"1x":[0]}})",
      R"({"orders":{"1":0}})",
      R"({"orders":{"1":["0"]}})",
      R"({"branch_headers":{"k":1}})",
      R"({"custom_data":{}})",
  };
  for (const char* text : corrupt) {
    INFO(text);
    Result<TransOptions> decoded = DecodeOptions(text);
    REQUIRE_FALSE(decoded);
    CHECK(decoded.status().code() == StatusCode::kInternal);
  }
}

TEST_CASE("options that JSON cannot carry are refused with InvalidArgument naming the field",
          "[storage]") {
  TransOptions custom;
  custom.custom_data = "\xc3\x28";
  TransOptions header;
  header.branch_headers = {{"X-Ok", "\xff"}};
  TransOptions name;
  name.workflow_name = "\xed\xa0\x80";
  for (const auto& [options, field] :
       {std::pair{custom, "custom_data"}, std::pair{header, "a header's value"},
        std::pair{name, "workflow_name"}}) {
    Result<std::string> encoded = EncodeOptions(options);
    REQUIRE_FALSE(encoded);
    CHECK(encoded.status().code() == StatusCode::kInvalidArgument);
    CHECK_THAT(encoded.status().message(), Catch::Contains(field) && Catch::Contains("UTF-8"));
  }
}

}  // namespace
}  // namespace settle::storage
