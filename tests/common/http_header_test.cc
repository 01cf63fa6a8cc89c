#include "settle/common/http_header.h"

#include <catch2/catch.hpp>
#include <string>

namespace settle {
namespace {

TEST_CASE("header names are tokens", "[common][http]") {
  CHECK(IsValidHeaderName("Authorization"));
  CHECK(IsValidHeaderName("X-Request-Id"));
  CHECK_FALSE(IsValidHeaderName(""));
  CHECK_FALSE(IsValidHeaderName("Bad Name"));
  CHECK_FALSE(IsValidHeaderName("Colon:"));
  CHECK_FALSE(IsValidHeaderName("new\nline"));
}

TEST_CASE("header values cannot smuggle in other headers", "[common][http]") {
  CHECK(IsValidHeaderValue("Bearer abc"));
  CHECK(IsValidHeaderValue("tab\tok"));
  CHECK(IsValidHeaderValue(""));
  CHECK_FALSE(IsValidHeaderValue("a\r\nEvil: 1"));
  CHECK_FALSE(IsValidHeaderValue("a\nb"));
  CHECK_FALSE(IsValidHeaderValue(std::string("a\0b", 3)));
}

}  // namespace
}  // namespace settle
