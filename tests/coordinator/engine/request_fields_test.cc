// Which members of a request settle does not know (request_fields.h): DTM's SDKs' members are
// known whether settle reads them or not; the others are named, safely, or refused.
#include "settle/engine/request_fields.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

namespace settle::engine {
namespace {

using Fields = std::vector<std::string>;

TEST_CASE("the members DTM's SDKs send are known, wherever their step index", "[fields]") {
  for (const char* field :
       {"protocol", "retry_count", "passthrough_headers", "subType", "try", "status", "req_extra",
        "custom_data", "steps[0].data", "steps[999].compensate", "query_prepared", "steps"}) {
    INFO(field);
    CHECK(IsDtmClientField(field));
  }
  for (const char* field :
       {"wait_resutl", "retry_limt", "steps[0].actoin", "Gid", "gid ", "custom_data.delay"}) {
    INFO(field);
    CHECK_FALSE(IsDtmClientField(field));
  }
}

TEST_CASE("unknown members are listed in order, DTM's left out", "[fields]") {
  CHECK(UnknownFields({"protocol", "wait_resutl", "steps[1].actoin", "retry_count"}) ==
        Fields{"wait_resutl", "steps[1].actoin"});
  CHECK(UnknownFields({}).empty());
  CHECK(ListOfFields({"wait_resutl", "retry_limt"}) == "wait_resutl, retry_limt");
}

TEST_CASE("a hostile member's name is escaped and cut before it reaches a header or a log",
          "[fields][bad-input]") {
  const Fields shown = UnknownFields({"x\r\nSet-Cookie: a=b", "caf\xc3\xa9", "a,b%\"\\"});
  REQUIRE(shown.size() == 3);
  CHECK(shown[0] == "x%0D%0ASet-Cookie:%20a=b");
  CHECK(shown[1] == "caf%C3%A9");
  CHECK(shown[2] == "a%2Cb%25%22%5C");
  const Fields long_one = UnknownFields({std::string(10'000, 'z')});
  REQUIRE(long_one.size() == 1);
  CHECK(long_one[0] == std::string(kMaxUnknownFieldPath, 'z') + "...");

  Fields many;
  for (int i = 0; i < 100; ++i) many.push_back("f" + std::to_string(i));
  const std::string list = ListOfFields(UnknownFields(many));
  CHECK_THAT(list, Catch::StartsWith("f0, f1, ") && Catch::EndsWith(", f15, and 84 more"));
}

TEST_CASE("strict requests refuse an unknown member naming it", "[fields]") {
  const Status s = RefuseUnknownField("wait_resutl");
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(s.message(), Catch::StartsWith("wait_resutl: unknown field"));
}

}  // namespace
}  // namespace settle::engine
