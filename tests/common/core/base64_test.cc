// Base64 (RFC 4648 §4) both ways, and the UTF-8 check that decides how a payload is shown.
#include "settle/core/base64.h"

#include <catch2/catch.hpp>

#include <string>

namespace settle {
namespace {

TEST_CASE("base64 follows RFC 4648's test vectors, both ways", "[base64]") {
  const std::pair<std::string, std::string> vectors[] = {{"", ""},
                                                         {"f", "Zg=="},
                                                         {"fo", "Zm8="},
                                                         {"foo", "Zm9v"},
                                                         {"foob", "Zm9vYg=="},
                                                         {"fooba", "Zm9vYmE="},
                                                         {"foobar", "Zm9vYmFy"}};
  for (const auto& [bytes, text] : vectors) {
    CHECK(Base64Encode(bytes) == text);
    CHECK(Base64Decode(text) == bytes);
  }
  const std::string binary("\x08\x96\x01\x00\xff", 5);
  CHECK(Base64Decode(Base64Encode(binary)) == binary);
  CHECK_FALSE(Base64Decode("Zm9v!"));
  CHECK_FALSE(Base64Decode("Z=m9"));
}

TEST_CASE("UTF-8 is well-formed or not", "[utf8]") {
  CHECK(IsValidUtf8(""));
  CHECK(IsValidUtf8(R"({"amount":30})"));
  CHECK(IsValidUtf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
  CHECK_FALSE(IsValidUtf8(std::string("\x08\x96\x01", 3)));  // a protobuf varint
  CHECK_FALSE(IsValidUtf8("\xc0\xaf"));                      // overlong '/'
  CHECK_FALSE(IsValidUtf8("\xed\xa0\x80"));                  // a surrogate
  CHECK_FALSE(IsValidUtf8("\xf4\x90\x80\x80"));              // past U+10FFFF
  CHECK_FALSE(IsValidUtf8("\xe2\x82"));                      // cut short
  CHECK_FALSE(IsValidUtf8("\xff"));
}

}  // namespace
}  // namespace settle
