#include "settle/core/ascii.h"

#include <catch2/catch.hpp>

#include "settle/core/url.h"

namespace settle {
namespace {

TEST_CASE("protocol names compare by ASCII letters only, whatever the locale", "[ascii]") {
  CHECK(AsciiLowercase("Signature-Input") == "signature-input");
  CHECK(AsciiUppercase("post") == "POST");
  // Bytes outside A-Z and a-z stay as they are: a UTF-8 name is not folded.
  CHECK(AsciiLowercase("CAF\xc3\x89-1") == "caf\xc3\x89-1");
  CHECK(EqualsIgnoreAsciiCase("Content-Digest", "content-DIGEST"));
  CHECK_FALSE(EqualsIgnoreAsciiCase("Content-Digest", "Content-Digests"));
  CHECK_FALSE(EqualsIgnoreAsciiCase("\xc3\x89", "\xc3\xa9"));
  CHECK(StartsWithIgnoreAsciiCase("GRPCS://h:1", "grpcs://"));
  CHECK_FALSE(StartsWithIgnoreAsciiCase("grpc", "grpc://"));
}

TEST_CASE("a hex digit's value is read in either case, or -1 for any other byte", "[ascii]") {
  CHECK(HexDigitValue('0') == 0);
  CHECK(HexDigitValue('9') == 9);
  CHECK(HexDigitValue('a') == 10);
  CHECK(HexDigitValue('F') == 15);
  for (const char c : {'g', 'G', '/', ':', '@', '`', ' ', '\0', '\xff'}) {
    CAPTURE(static_cast<int>(c));
    CHECK(HexDigitValue(c) == -1);
    CHECK(LowerHexDigitValue(c) == -1);
  }
  // W3C Trace Context's ids are lower case only.
  CHECK(LowerHexDigitValue('f') == 15);
  CHECK(LowerHexDigitValue('7') == 7);
  CHECK(LowerHexDigitValue('A') == -1);
}

TEST_CASE("host and port join with brackets around an IPv6 address", "[ascii][url]") {
  CHECK(JoinHostPort("127.0.0.1", 36790) == "127.0.0.1:36790");
  CHECK(JoinHostPort("::1", 80) == "[::1]:80");
  CHECK(JoinHostPort("[::1]", 80) == "[::1]:80");
  CHECK(JoinHostPort("localhost", 443) == "localhost:443");
}

}  // namespace
}  // namespace settle
