// Branch URLs that name a gRPC method (grpc_target.h): DTM's form and grpc://, grpcs://.
#include "settle/core/grpc_target.h"

#include <catch2/catch.hpp>

namespace settle {
namespace {

TEST_CASE("DTM's form and grpc:// and grpcs:// name a method on a host", "[grpc_target]") {
  auto dtm = ParseGrpcTarget("localhost:36790/busi.Busi/TransOut");
  REQUIRE(dtm);
  CHECK_FALSE(dtm->tls);
  CHECK(dtm->host == "localhost");
  CHECK(dtm->port == 36790);
  CHECK(dtm->method == "/busi.Busi/TransOut");
  CHECK(dtm->Origin() == "grpc://localhost:36790");

  auto secure = ParseGrpcTarget("GRPCS://[::1]/pkg.v1.Svc/Do_It");
  REQUIRE(secure);
  CHECK(secure->tls);
  CHECK(secure->port == 443);
  CHECK(secure->HostPort() == "[::1]:443");
  CHECK(secure->Origin() == "grpcs://[::1]:443");
  CHECK(ParseGrpcTarget("grpc://h/a.B/C")->port == 80);
}

TEST_CASE("what names no method, or no host and port, is refused", "[grpc_target][bad-input]") {
  for (const char* url : {"localhost/busi.Busi/TransOut", "localhost:1/busi.Busi",
                          "localhost:1/busi.Busi/TransOut/extra", "localhost:1/a.B/C?x=1",
                          "grpc://:1/a.B/C", "grpc://h:99999/a.B/C", "grpc://u@h:1/a.B/C",
                          "grpc://h:1/a B/C", "[::1]/a.B/C", "grpc://h:1/a.B/C#f", ""}) {
    INFO(url);
    CHECK_FALSE(ParseGrpcTarget(url));
  }
  CHECK(LooksLikeGrpcTarget("h:1/a.B/C"));
  CHECK(LooksLikeGrpcTarget("grpcs://h/a.B/C"));
  CHECK_FALSE(LooksLikeGrpcTarget("http://h/a"));
  CHECK_FALSE(LooksLikeGrpcTarget("topic://orders"));
}

TEST_CASE("a coordinator's gRPC address is an origin without a method", "[grpc_target]") {
  auto dtm = ParseGrpcOrigin("localhost:36790");
  REQUIRE(dtm);
  CHECK_FALSE(dtm->tls);
  CHECK(dtm->HostPort() == "localhost:36790");
  CHECK(dtm->method.empty());
  auto secure = ParseGrpcOrigin("grpcs://[::1]:9/");
  REQUIRE(secure);
  CHECK(secure->tls);
  CHECK(secure->Origin() == "grpcs://[::1]:9");
  CHECK(ParseGrpcOrigin("GRPC://h")->port == 80);
  for (const char* url : {"localhost", "http://h:1", "grpc://h:1/dtmgimp.Dtm", "grpc://h:1/?x=1",
                          "grpc://:1", "h:1/a.B/C", ""}) {
    INFO(url);
    CHECK_FALSE(ParseGrpcOrigin(url));
  }
}

TEST_CASE("a branch header travels as gRPC metadata only if gRPC can carry it", "[grpc_target]") {
  CHECK(IsGrpcMetadataHeader("Authorization", "Bearer t"));
  CHECK(IsGrpcMetadataHeader("x-trace.id_1", "v"));
  CHECK_FALSE(IsGrpcMetadataHeader("X!Mark", "v"));
  CHECK_FALSE(IsGrpcMetadataHeader("grpc-timeout", "1S"));
  CHECK_FALSE(IsGrpcMetadataHeader("trace-BIN", "v"));
  CHECK_FALSE(IsGrpcMetadataHeader("x", "caf\xc3\xa9"));
  CHECK_FALSE(IsGrpcMetadataHeader("x", "a\tb"));
}

}  // namespace
}  // namespace settle
