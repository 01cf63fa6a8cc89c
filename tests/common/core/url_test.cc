#include "settle/core/url.h"

#include <catch2/catch.hpp>
#include <string>

namespace settle {
namespace {

TEST_CASE("an http URL is split into host, port and target", "[common][url]") {
  auto url = ParseUrl("http://127.0.0.1:8081/api/TransOut?x=1");
  REQUIRE(url);
  CHECK(url->host == "127.0.0.1");
  CHECK(url->port == 8081);
  CHECK(url->path_and_query == "/api/TransOut?x=1");

  auto bare = ParseUrl("http://localhost");
  REQUIRE(bare);
  CHECK(bare->port == 80);
  CHECK(bare->path_and_query == "/");

  auto v6 = ParseUrl("http://[::1]:9000/p");
  REQUIRE(v6);
  CHECK(v6->host == "::1");
  CHECK(v6->port == 9000);
}

TEST_CASE("https URLs default to port 443, the scheme is read in any case", "[net][url]") {
  auto secure = ParseUrl("https://bank.example/api/TransIn");
  REQUIRE(secure);
  CHECK(secure->tls);
  CHECK(secure->port == 443);
  CHECK(secure->Origin() == "https://bank.example:443");
  auto shouting = ParseUrl("HTTPS://[::1]:8443/x");
  REQUIRE(shouting);
  CHECK(shouting->tls);
  CHECK(shouting->HostPort() == "[::1]:8443");
  auto mixed = ParseUrl("Http://p/x");
  REQUIRE(mixed);
  CHECK_FALSE(mixed->tls);
  CHECK_FALSE(ParseUrl("httpss://p/x"));
  CHECK_FALSE(ParseUrl("https:/p/x"));
}

TEST_CASE("only well-formed http and https URLs are accepted", "[common][url]") {
  for (const char* bad : {"", "ftp://p", "http://", "http:///x", "http://p:0/", "http://p:65536/",
                          "http://p:x/", "http://p:/", "http://u@p/", "http://p/a b",
                          "http://p/#frag", "//p/x", "p/x", "http://[::1/"}) {
    INFO(bad);
    CHECK_FALSE(ParseUrl(bad));
  }
  CHECK_FALSE(ParseUrl("http://p/" + std::string(kMaxUrlLength, 'a')));
}

// Found by fuzz/url_duration_fuzz.cc: "http://[[>20]:9000/" was taken with the host "[>20",
// which no resolver knows and which written out again ("Host: [>20:9000") is another URL.
TEST_CASE("a host is a name, an IPv4 address or a bracketed IPv6 address", "[common][url]") {
  for (const char* bad : {"http://[[>20]:9000/", "http://[]/", "http://[1.2.3.4]/",
                          "http://[::1%25eth0]/", "http://[fe80::g]/", "http://a[b:80/",
                          "http://a]b/", "http://p,q/", "http://p%41/", "http://p!/"}) {
    INFO(bad);
    CHECK_FALSE(ParseUrl(bad));
  }
  for (const char* good : {"http://[::ffff:127.0.0.1]:80/", "http://[2001:DB8::1]/",
                           "http://my-service.svc_1.local/", "http://10.0.0.1:8080/"}) {
    INFO(good);
    CHECK(ParseUrl(good));
  }
}

TEST_CASE("branch query parameters are appended with ? or &", "[common][url]") {
  auto plain = ParseUrl("http://p/confirm");
  REQUIRE(plain);
  CHECK(plain->TargetWith({{"gid", "g1"}, {"op", "confirm"}}) == "/confirm?gid=g1&op=confirm");

  auto with_query = ParseUrl("http://p/confirm?tenant=7");
  REQUIRE(with_query);
  CHECK(with_query->TargetWith({{"gid", "g1"}}) == "/confirm?tenant=7&gid=g1");

  auto trailing = ParseUrl("http://p/confirm?");
  REQUIRE(trailing);
  CHECK(trailing->TargetWith({{"gid", "g 1"}}) == "/confirm?gid=g%201");
}

TEST_CASE("a request target keeps its reserved characters and encodes raw UTF-8", "[common][url]") {
  CHECK(PercentEncodeNonAscii("/p?tenant=a+b&x=/y") == "/p?tenant=a+b&x=/y");
  CHECK(PercentEncodeNonAscii("/caf\xc3\xa9") == "/caf%C3%A9");
  CHECK(PercentEncode("a+b/c d") == "a%2Bb%2Fc%20d");
}

// Found by fuzz/url_duration_fuzz.cc: the separator was chosen from the URL's last byte alone,
// so a '?' inside a value swallowed the gid into that value, and a '&' in the path left the
// parameters without a query.
TEST_CASE("only the query's own start and a trailing & make the separator unnecessary",
          "[common][url]") {
  struct Case {
    std::string url;
    std::string target;
  };
  for (const Case& c : {
           Case{"http://p/confirm?next=?", "/confirm?next=?&gid=g1"},
           Case{"http://p/confirm?a=1&b=?", "/confirm?a=1&b=?&gid=g1"},
           Case{"http://p/a&b", "/a&b?gid=g1"},
           Case{"http://p/a&b?", "/a&b?gid=g1"},
           Case{"http://p/confirm?tenant=7&", "/confirm?tenant=7&gid=g1"},
           Case{"http://p?", "/?gid=g1"},
       }) {
    INFO(c.url);
    auto url = ParseUrl(c.url);
    REQUIRE(url);
    CHECK(url->TargetWith({{"gid", "g1"}}) == c.target);
  }
}

}  // namespace
}  // namespace settle
