// The names a participant answers to (served_authorities.h): what a signed call must have been
// signed for, so that a call settled signed for another participant is refused here.
#include "settle/sdk/served_authorities.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "settle/sdk/participant.h"
#include "settle/signing/keys.h"

namespace settle::sdk {
namespace {

using Names = std::vector<std::string>;

TEST_CASE("by default a participant answers to the address it listens on",
          "[sdk][signing][authority]") {
  CHECK(*ServedAuthorities({}, "10.0.0.7", 8081, "authorities") == Names{"10.0.0.7:8081"});
  CHECK(*ServedAuthorities({}, "Bank.Internal", 8081, "authorities") ==
        Names{"bank.internal:8081"});
  CHECK(*ServedAuthorities({}, "fd00::7", 8081, "authorities") == Names{"[fd00::7]:8081"});
  // A loopback address is dialed by either name.
  CHECK(*ServedAuthorities({}, "127.0.0.1", 8081, "authorities") ==
        Names{"127.0.0.1:8081", "localhost:8081"});
  CHECK(*ServedAuthorities({}, "localhost", 8081, "authorities") ==
        Names{"localhost:8081", "127.0.0.1:8081"});
  CHECK(*ServedAuthorities({}, "::1", 8081, "authorities") ==
        Names{"[::1]:8081", "localhost:8081", "127.0.0.1:8081"});
}

TEST_CASE("a participant on every address must be told its names", "[sdk][signing][authority]") {
  for (const char* host : {"0.0.0.0", "::", "[::]", ""}) {
    INFO("host " << host);
    auto names = ServedAuthorities({}, host, 8081, "authorities");
    REQUIRE_FALSE(names);
    CHECK(names.status().code() == StatusCode::kInvalidArgument);
    CHECK_THAT(names.status().message(), Catch::StartsWith("authorities: required when listening "
                                                           "on every address"));
    CHECK(*ServedAuthorities({"bank.example:443"}, host, 8081, "authorities") ==
          Names{"bank.example:443"});
  }
}

TEST_CASE("configured names are host:port, lowercased, each once", "[sdk][signing][authority]") {
  CHECK(*ServedAuthorities({"Bank.Example:443", "bank.example:443", "[FD00::7]:8081"}, "0.0.0.0",
                           8081, "authorities") == Names{"bank.example:443", "[fd00::7]:8081"});
  const struct {
    const char* name;
    const char* reason;
  } refused[] = {
      {"", "is empty"},
      {"bank.example", "needs a port"},
      {"bank.example:", "has no port in 1..65535"},
      {"bank.example:0", "has no port in 1..65535"},
      {"bank.example:65536", "has no port in 1..65535"},
      {"bank.example:44x", "has no port in 1..65535"},
      {":443", "needs a host"},
      {"fd00::7:8081", "is an IPv6 address without brackets"},
      {"[fd00::7]", "needs a port after its bracketed address"},
      {"bank.example:443/api", "holds a character a host and port cannot"},
      {"user@bank.example:443", "holds a character a host and port cannot"},
      {"bank example:443", "holds a character a host and port cannot"},
      {"bank.example:443,evil:80", "holds a character a host and port cannot"},
  };
  for (const auto& c : refused) {
    INFO("name \"" << c.name << "\"");
    auto names = ServedAuthorities({c.name}, "127.0.0.1", 8081, "--authority");
    REQUIRE_FALSE(names);
    CHECK_THAT(names.status().message(), Catch::StartsWith("--authority: \""));
    CHECK_THAT(names.status().message(), Catch::Contains(c.reason));
  }
}

TEST_CASE("Participant::Start on every address with signed calls needs authorities",
          "[sdk][signing][authority]") {
  auto key = signing::VerifyingKey::FromText(
      "-----BEGIN PUBLIC KEY-----\n"
      "MCowBQYDK2VwAyEAJrQLj5P/89iXES9+vFgrIy29clF9CC/oPPsw3c5D0bs=\n"
      "-----END PUBLIC KEY-----\n");
  REQUIRE(key);
  const SignedCalls policy{.keys = {*key}};
  {
    Participant participant(ParticipantOptions{.io_threads = 1, .signed_calls = policy});
    auto started = participant.Start("0.0.0.0", 0);
    REQUIRE_FALSE(started);
    CHECK_THAT(started.status().message(), Catch::StartsWith("authorities: required"));
  }
  {
    Participant participant(ParticipantOptions{
        .io_threads = 1, .signed_calls = policy, .authorities = {"bank.example:8443"}});
    REQUIRE(participant.Start("0.0.0.0", 0));
    CHECK(participant.authorities() == Names{"bank.example:8443"});
  }
  {
    Participant participant(ParticipantOptions{
        .io_threads = 1, .signed_calls = policy, .authorities = {"bank.example"}});
    auto started = participant.Start("127.0.0.1", 0);
    REQUIRE_FALSE(started);
    CHECK_THAT(started.status().message(), Catch::Contains("needs a port"));
  }
  {
    // Without signed calls there is nothing to answer to.
    Participant participant(ParticipantOptions{.io_threads = 1});
    REQUIRE(participant.Start("0.0.0.0", 0));
    CHECK(participant.authorities().empty());
  }
  {
    Participant participant(ParticipantOptions{.io_threads = 1, .signed_calls = policy});
    auto port = participant.Start("127.0.0.1", 0);
    REQUIRE(port);
    CHECK(participant.authorities() ==
          Names{"127.0.0.1:" + std::to_string(*port), "localhost:" + std::to_string(*port)});
  }
}

}  // namespace
}  // namespace settle::sdk
