#include "settle/signing/content_digest.h"

#include <catch2/catch.hpp>
#include <string>

namespace settle::signing {
namespace {

TEST_CASE("Content-Digest is RFC 9530's sha-256 member", "[signing][digest]") {
  // RFC 9530's examples (Appendix B): the content {"hello": "world"} and a line feed.
  CHECK(ContentDigestSha256("{\"hello\": \"world\"}\n") ==
        "sha-256=:RK/0qy18MlBSVnWgjwz6lZEWjP/lF5HF9bvEF8FabDg=:");
  // RFC 9421's test request carries the same JSON without the line feed (Content-Length 18);
  // its SHA-256, checked with `printf '{"hello": "world"}' | openssl dgst -sha256 -binary`.
  CHECK(ContentDigestSha256("{\"hello\": \"world\"}") ==
        "sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:");
  // FIPS 180-2's "abc".
  CHECK(ContentDigestSha256("abc") == "sha-256=:ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0=:");
}

TEST_CASE("an empty body has a digest too, and every byte counts", "[signing][digest]") {
  CHECK(ContentDigestSha256("") == "sha-256=:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=:");
  const std::string with_nul("a\0b", 3);
  CHECK(ContentDigestSha256(with_nul) != ContentDigestSha256("ab"));
  CHECK(ContentDigestSha256(with_nul) != ContentDigestSha256("a"));
}

}  // namespace
}  // namespace settle::signing
