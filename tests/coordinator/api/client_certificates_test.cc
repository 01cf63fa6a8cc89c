// Client certificates: which access a verified certificate's subject grants, and its name.
#include "settle/api/client_certificates.h"

#include <catch2/catch.hpp>

#include <string>

namespace settle::api {
namespace {

TEST_CASE("a mapped subject is a caller with its level and name, and any other subject is none",
          "[auth][mtls]") {
  ClientCertificates map;
  CHECK_FALSE(map.enabled());
  REQUIRE(map.Add(Access::kClient, "CN=order-service,O=Shop").ok());
  REQUIRE(map.Add(Access::kAdmin, "CN=alice,OU=Ops,O=Shop", "on-call").ok());
  CHECK(map.enabled());
  CHECK(map.size() == 2);

  const std::optional<Caller> order = map.Identify("CN=order-service,O=Shop");
  REQUIRE(order);
  CHECK(order->access == Access::kClient);
  CHECK(order->name == "order-service");
  const std::optional<Caller> alice = map.Identify("CN=alice,OU=Ops,O=Shop");
  REQUIRE(alice);
  CHECK(alice->access == Access::kAdmin);
  CHECK(alice->name == "on-call");

  for (const char* other : {"", "CN=order-service", "CN=order-service,O=Shop2",
                            "cn=order-service,o=shop", "O=Shop,CN=order-service"}) {
    INFO(other);
    CHECK_FALSE(map.Identify(other));
  }
}

TEST_CASE(
    "a certificate file holds one \"level subject\" line per subject, named by its comment or "
    "else its CN",
    "[auth][mtls]") {
  ClientCertificates map;
  const Status loaded = map.AddFromText(
      "# who may call settled with a certificate\n"
      "\n"
      "client CN=order-service,O=Shop\n"
      "  admin   CN=alice,OU=Ops,O=Shop Inc.   # on-call  \n"
      "read subject=CN=dashboard,O=Shop\\, Inc.\n"
      "read O=Shop,L=Berlin\n");
  REQUIRE(loaded.ok());
  CHECK(map.size() == 4);
  CHECK(map.Identify("CN=order-service,O=Shop")->name == "order-service");
  CHECK(map.Identify("CN=alice,OU=Ops,O=Shop Inc.")->name == "on-call");
  CHECK(map.Identify("CN=alice,OU=Ops,O=Shop Inc.")->access == Access::kAdmin);
  // As `openssl x509 -noout -subject -nameopt RFC2253` prints it, "subject=" and all.
  CHECK(map.Identify("CN=dashboard,O=Shop\\, Inc.")->name == "dashboard");
  CHECK(map.Identify("CN=dashboard,O=Shop\\, Inc.")->access == Access::kRead);
  // Without a CN, the whole subject.
  CHECK(map.Identify("O=Shop,L=Berlin")->name == "O=Shop,L=Berlin");
}

TEST_CASE("a bad line in a certificate file is refused, naming the line", "[auth][mtls]") {
  struct Case {
    const char* text;
    const char* says;
  };
  for (const Case& c : {Case{"client CN=a\nroot CN=b\n", "line 2"}, Case{"client\n", "line 1"},
                        Case{"client order-service\n", "subject"},
                        Case{"read CN=a\n\nadmin CN=a # again\n", "line 3"},
                        Case{"admin # only a name\n", "line 1"}}) {
    INFO(c.text);
    ClientCertificates map;
    const Status loaded = map.AddFromText(c.text);
    CHECK(loaded.code() == StatusCode::kInvalidArgument);
    CHECK_THAT(loaded.message(), Catch::Contains(c.says));
  }
  CHECK_THAT(ClientCertificates().AddFromText("read CN=a\nread CN=a\n").message(),
             Catch::Contains("line 2") && Catch::Contains("mapped twice"));
}

TEST_CASE("a subject's CN is its name, escapes undone", "[auth][mtls]") {
  CHECK(CommonName("CN=order-service,O=Shop") == "order-service");
  CHECK(CommonName("O=Shop,CN=last") == "last");
  CHECK(CommonName("CN=Shop\\, Inc. billing,O=Shop") == "Shop, Inc. billing");
  CHECK(CommonName("O=Shop,OU=CN\\=x") == "");
}

}  // namespace
}  // namespace settle::api
