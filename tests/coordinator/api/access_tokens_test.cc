// Bearer tokens: which access a request's Authorization header grants.
#include "settle/api/access_tokens.h"

#include <catch2/catch.hpp>

#include <string>

namespace settle::api {
namespace {

const std::string kRead = "read-token-0123456789";
const std::string kClient = "client-token-0123456789";
const std::string kAdmin = "admin-token-0123456789";

AccessTokens ThreeTokens() {
  AccessTokens tokens;
  REQUIRE(tokens.Add(Access::kRead, kRead).ok());
  REQUIRE(tokens.Add(Access::kClient, kClient).ok());
  REQUIRE(tokens.Add(Access::kAdmin, kAdmin).ok());
  return tokens;
}

Access GrantOf(const AccessTokens& tokens, const std::string& header) {
  return tokens.Grant(&header);
}

TEST_CASE("without tokens every request has admin access", "[auth]") {
  AccessTokens none;
  CHECK_FALSE(none.enabled());
  CHECK(none.Grant(nullptr) == Access::kAdmin);
  CHECK(GrantOf(none, "Bearer whatever") == Access::kAdmin);
}

TEST_CASE("each token grants its own level", "[auth]") {
  const AccessTokens tokens = ThreeTokens();
  CHECK(GrantOf(tokens, "Bearer " + kRead) == Access::kRead);
  CHECK(GrantOf(tokens, "Bearer " + kClient) == Access::kClient);
  CHECK(GrantOf(tokens, "Bearer " + kAdmin) == Access::kAdmin);
  CHECK(Access::kRead < Access::kClient);
  CHECK(Access::kClient < Access::kAdmin);
}

TEST_CASE("a missing, unknown or malformed authorization grants nothing", "[auth]") {
  const AccessTokens tokens = ThreeTokens();
  CHECK(tokens.Grant(nullptr) == Access::kNone);
  CHECK(GrantOf(tokens, "") == Access::kNone);
  CHECK(GrantOf(tokens, "Bearer ") == Access::kNone);
  CHECK(GrantOf(tokens, "Bearer " + kAdmin + "x") == Access::kNone);
  CHECK(GrantOf(tokens, "Bearer " + kAdmin.substr(1)) == Access::kNone);
  CHECK(GrantOf(tokens, "Basic " + kAdmin) == Access::kNone);
  CHECK(GrantOf(tokens, kAdmin) == Access::kNone);
}

TEST_CASE("the scheme is matched without case and spaces around the token are ignored", "[auth]") {
  const AccessTokens tokens = ThreeTokens();
  CHECK(GrantOf(tokens, "bearer " + kClient) == Access::kClient);
  CHECK(GrantOf(tokens, "BEARER   " + kClient + "  ") == Access::kClient);
}

TEST_CASE("several tokens may share a level, so that one can be rotated", "[auth]") {
  AccessTokens tokens;
  REQUIRE(tokens.Add(Access::kAdmin, "old-admin-token-000000").ok());
  REQUIRE(tokens.Add(Access::kAdmin, "new-admin-token-111111").ok());
  CHECK(GrantOf(tokens, "Bearer old-admin-token-000000") == Access::kAdmin);
  CHECK(GrantOf(tokens, "Bearer new-admin-token-111111") == Access::kAdmin);
}

TEST_CASE("short tokens and tokens a header cannot carry are refused, naming the level", "[auth]") {
  AccessTokens tokens;
  const Status short_one = tokens.Add(Access::kRead, "short");
  CHECK(short_one.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(short_one.message(), Catch::Contains("read token") && Catch::Contains("16"));
  CHECK(tokens.Add(Access::kAdmin, "has a space in it 0123").code() ==
        StatusCode::kInvalidArgument);
  CHECK(tokens.Add(Access::kAdmin, std::string("line\nbreak-0123456789")).code() ==
        StatusCode::kInvalidArgument);
  CHECK(tokens.Add(Access::kAdmin, std::string(5000, 'a')).code() == StatusCode::kInvalidArgument);
  CHECK_FALSE(tokens.enabled());
}

TEST_CASE("a token file holds one \"level token\" line per token, with comments", "[auth]") {
  AccessTokens tokens;
  REQUIRE(tokens
              .AddFromText("# Settle tokens\n"
                           "\n"
                           "read   " +
                           kRead +
                           "\r\n"
                           "admin\t" +
                           kAdmin + "   # on-call\n")
              .ok());
  CHECK(GrantOf(tokens, "Bearer " + kRead) == Access::kRead);
  CHECK(GrantOf(tokens, "Bearer " + kAdmin) == Access::kAdmin);
}

TEST_CASE("a token is named by its comment in the token file, or else by level and number",
          "[auth]") {
  AccessTokens tokens;
  REQUIRE(tokens.Add(Access::kAdmin, "flag-admin-token-000000").ok());
  REQUIRE(tokens
              .AddFromText("read " + kRead + "  #  Prometheus scraper  \n" + "admin " + kAdmin +
                           "\n" + "client " + kClient + " #\n")
              .ok());
  const auto identify = [&tokens](const std::string& token) {
    const std::string header = "Bearer " + token;
    return tokens.Identify(&header);
  };
  CHECK(identify(kRead).name == "Prometheus scraper");
  CHECK(identify(kRead).access == Access::kRead);
  CHECK(identify("flag-admin-token-000000").name == "admin-token-1");
  CHECK(identify(kAdmin).name == "admin-token-2");
  CHECK(identify(kClient).name == "client-token-1");
  CHECK(identify("unknown-token-0123456789").access == Access::kNone);
  CHECK(identify("unknown-token-0123456789").name.empty());
  CHECK(AccessTokens().Identify(nullptr).name == "anonymous");
}

TEST_CASE("a bad line in a token file is refused, naming the line", "[auth]") {
  AccessTokens tokens;
  const Status unknown_level = tokens.AddFromText("read " + kRead + "\nroot " + kAdmin + "\n");
  CHECK(unknown_level.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(unknown_level.message(), Catch::Contains("line 2"));
  CHECK_THAT(AccessTokens().AddFromText("admin\n").message(), Catch::Contains("line 1"));
  CHECK_THAT(AccessTokens().AddFromText("admin tiny\n").message(),
             Catch::Contains("line 1") && Catch::Contains("16"));
  CHECK_THAT(AccessTokens().AddFromText("admin " + kAdmin + " trailing words\n").message(),
             Catch::Contains("line 1") && Catch::Contains("blanks"));
}

}  // namespace
}  // namespace settle::api
