#include "settle/net/request_signing.h"

#include <catch2/catch.hpp>
#include <string>

#include "../signing/rfc9421_keys.h"
#include "settle/net/message.h"
#include "settle/signing/request_signature.h"

namespace settle::net {
namespace {

signing::SignedRequest AsArrived(const ClientRequest& request, const std::string& authority) {
  const std::size_t question = request.target.find('?');
  return {.method = request.method,
          .authority = authority,
          .path = request.target.substr(0, question),
          .query = question == std::string::npos ? "" : request.target.substr(question + 1),
          .body = request.body};
}

TEST_CASE("a request is signed for its URL's host:port, never for a Host header it carries",
          "[net][signing]") {
  auto key = signing::SigningKey::FromText(signing::testing::kRfcEd25519Private);
  REQUIRE(key);
  auto verifying = signing::VerifyingKey::FromText(signing::testing::kRfcEd25519Public);
  REQUIRE(verifying);
  ClientRequest request;
  request.method = "POST";
  request.url = *ParseUrl("http://bank-b:8081/api/TransIn");
  request.target = "/api/TransIn?gid=g1&trans_type=saga&branch_id=01&op=action";
  request.headers = {{"X-Tenant", "acme"}, {"host", "bank-c:9090"}};
  request.body = R"({"amount":5})";
  const std::int64_t now = 1'800'000'000;
  REQUIRE(SignRequest(request, *key, now).ok());

  // The Host sent is the URL's (wire.cc writes it when the request has none of its own).
  CHECK(FindHeader(request.headers, "Host") == nullptr);
  CHECK(*FindHeader(request.headers, "X-Tenant") == "acme");
  const signing::VerifyPolicy at_b{.keys = {*verifying}, .authorities = {"bank-b:8081"}};
  CHECK(signing::VerifyRequest(AsArrived(request, "bank-b:8081"), request.headers, at_b, now).ok());
  const signing::VerifyPolicy at_c{.keys = {*verifying}, .authorities = {"bank-c:9090"}};
  CHECK_FALSE(
      signing::VerifyRequest(AsArrived(request, "bank-c:9090"), request.headers, at_c, now).ok());
}

}  // namespace
}  // namespace settle::net
