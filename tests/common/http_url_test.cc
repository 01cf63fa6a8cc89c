#include "settle/common/http_url.h"

#include <catch2/catch.hpp>
#include <string>

namespace settle {
namespace {

TEST_CASE("an http URL is split into host, port and target", "[common][url]") {
  auto url = ParseHttpUrl("http://127.0.0.1:8081/api/TransOut?x=1");
  REQUIRE(url);
  CHECK(url->host == "127.0.0.1");
  CHECK(url->port == 8081);
  CHECK(url->path_and_query == "/api/TransOut?x=1");

  auto bare = ParseHttpUrl("http://localhost");
  REQUIRE(bare);
  CHECK(bare->port == 80);
  CHECK(bare->path_and_query == "/");

  auto v6 = ParseHttpUrl("http://[::1]:9000/p");
  REQUIRE(v6);
  CHECK(v6->host == "::1");
  CHECK(v6->port == 9000);
}

TEST_CASE("only plain, well-formed http URLs are accepted", "[common][url]") {
  for (const char* bad : {"", "https://p/x", "ftp://p", "http://", "http:///x", "http://p:0/",
                          "http://p:65536/", "http://p:x/", "http://p:/", "http://u@p/",
                          "http://p/a b", "http://p/#frag", "//p/x", "p/x", "http://[::1/"}) {
    INFO(bad);
    CHECK_FALSE(ParseHttpUrl(bad));
  }
  CHECK_FALSE(ParseHttpUrl("http://p/" + std::string(kMaxUrlLength, 'a')));
}

TEST_CASE("branch query parameters are appended with ? or &", "[common][url]") {
  auto plain = ParseHttpUrl("http://p/confirm");
  REQUIRE(plain);
  CHECK(plain->TargetWith({{"gid", "g1"}, {"op", "confirm"}}) == "/confirm?gid=g1&op=confirm");

  auto with_query = ParseHttpUrl("http://p/confirm?tenant=7");
  REQUIRE(with_query);
  CHECK(with_query->TargetWith({{"gid", "g1"}}) == "/confirm?tenant=7&gid=g1");

  auto trailing = ParseHttpUrl("http://p/confirm?");
  REQUIRE(trailing);
  CHECK(trailing->TargetWith({{"gid", "g 1"}}) == "/confirm?gid=g%201");
}

TEST_CASE("a request target keeps its reserved characters and encodes raw UTF-8", "[common][url]") {
  CHECK(PercentEncodeNonAscii("/p?tenant=a+b&x=/y") == "/p?tenant=a+b&x=/y");
  CHECK(PercentEncodeNonAscii("/caf\xc3\xa9") == "/caf%C3%A9");
  CHECK(PercentEncode("a+b/c d") == "a%2Bb%2Fc%20d");
}

}  // namespace
}  // namespace settle
