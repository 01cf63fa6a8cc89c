#include "settle/core/protocol_keys.h"

#include <catch2/catch.hpp>
#include <string>

#include "settle/core/url.h"

namespace settle {
namespace {

std::string Named(std::string_view url) {
  const auto key = ProtocolKeyInQuery(url);
  return key ? std::string(*key) : std::string("(none)");
}

TEST_CASE("a URL whose query names a protocol key names it, lowercase", "[common][protocol_keys]") {
  CHECK(Named("http://bank/api/TransInConfirm?gid=VICTIM&trans_type=tcc&branch_id=02&op=confirm") ==
        "gid");
  CHECK(Named("http://bank/x?trans_type=tcc") == "trans_type");
  CHECK(Named("http://bank/x?tenant=7&branch_id=02") == "branch_id");
  CHECK(Named("http://bank/x?tenant=7&op=confirm") == "op");
  CHECK(Named("http://bank/x?branch_type=confirm") == "branch_type");
  CHECK(Named("http://bank/x?phase2_url=http://evil/") == "phase2_url");
  CHECK(Named("http://bank/x?dtm=http://evil/") == "dtm");
  // Without a value, or with an empty one, the name alone is enough.
  CHECK(Named("http://bank/x?gid") == "gid");
  CHECK(Named("http://bank/x?a=1&op=") == "op");
}

TEST_CASE("a protocol key is named in any case and any encoding", "[common][protocol_keys]") {
  CHECK(Named("http://bank/x?GID=v") == "gid");
  CHECK(Named("http://bank/x?Trans_Type=tcc") == "trans_type");
  CHECK(Named("http://bank/x?g%69d=v") == "gid");
  CHECK(Named("http://bank/x?%67%69%64=v") == "gid");
  CHECK(Named("http://bank/x?%4F%50=confirm") == "op");  // "OP"
  CHECK(Named("http://bank/x?%6fp=confirm") == "op");    // lowercase hex digits
  CHECK(Named("http://bank/x?branch%5Fid=02") == "branch_id");
  CHECK(Named("http://bank/x?trans%5ftype=tcc") == "trans_type");
}

TEST_CASE("parameters split at a semicolon as well as at '&'", "[common][protocol_keys]") {
  CHECK(Named("http://bank/x?a=1;op=confirm") == "op");
  CHECK(Named("http://bank/x?a=1;b=2&gid=v") == "gid");
  CHECK(Named("http://bank/x?;gid=v") == "gid");
  CHECK(Named("http://bank/x?a=1&&;;dtm=x") == "dtm");
}

TEST_CASE("near misses of a protocol key are allowed", "[common][protocol_keys]") {
  CHECK(Named("http://bank/x?gidx=1") == "(none)");
  CHECK(Named("http://bank/x?account=1&amount=5") == "(none)");
  CHECK(Named("http://bank/x?xgid=1&my_op=2&operation=3") == "(none)");
  CHECK(Named("http://bank/x?ops=1&dtms=2&branch=3&trans=4") == "(none)");
  // A key as a value, or after '=' in a value, is a value.
  CHECK(Named("http://bank/x?next=gid&ref=a=op") == "(none)");
  CHECK(Named("http://bank/x?redirect=/y?gid=1") == "(none)");  // "/y?gid=1" is redirect's value
  // Decoded once, as participants decode: a doubly encoded name is not the key.
  CHECK(Named("http://bank/x?%2567id=v") == "(none)");
  // A space is not trimmed: "gid " is another name ('+' and %20 decode to a space).
  CHECK(Named("http://bank/x?gid+=v") == "(none)");
  CHECK(Named("http://bank/x?%20gid=v") == "(none)");
  // A broken escape stays as written.
  CHECK(Named("http://bank/x?g%6=v") == "(none)");
}

TEST_CASE("only the query counts: not the path, not a fragment, not a URL without one",
          "[common][protocol_keys]") {
  CHECK(Named("http://bank/api/gid=1/op") == "(none)");
  CHECK(Named("http://bank/api;op=confirm/x") == "(none)");
  CHECK(Named("http://bank/x") == "(none)");
  CHECK(Named("http://bank/x?") == "(none)");
  CHECK(Named("http://bank/x?a=1#gid=2") == "(none)");
  CHECK(Named("127.0.0.1:50051/bank.Bank/TransIn") == "(none)");
}

TEST_CASE("the branch headers settled sets or signs itself are reserved, in any case",
          "[common][protocol_keys]") {
  for (const char* name :
       {"dtm-gid", "DTM-OP", "Dtm-Anything", "dtm-", "Host", "host", "Content-Length",
        "Transfer-Encoding", "connection", "Content-Type", "content-digest", "Signature-Input",
        "SIGNATURE", "X-Forwarded-Host", "forwarded", "Settle-Countersignature", "settle-x"}) {
    INFO(name);
    CHECK(IsReservedBranchHeader(name));
    CHECK(IsReservedGrpcBranchHeader(name));
  }
  for (const char* name : {"Authorization", "X-Tenant", "x-request-id", "dtm", "dtmgid", "settle",
                           "hosts", "X-Forwarded-For", "signatures", "User-Agent", "te"}) {
    INFO(name);
    CHECK_FALSE(IsReservedBranchHeader(name));
  }
}

TEST_CASE("over gRPC, te, user-agent, grpc-* and pseudo-headers are reserved too",
          "[common][protocol_keys]") {
  for (const char* name : {"te", "TE", "user-agent", "User-Agent", "grpc-timeout", "Grpc-Status",
                           ":authority", ":path", "content-type"}) {
    INFO(name);
    CHECK(IsReservedGrpcBranchHeader(name));
  }
  for (const char* name : {"x-tenant", "authorization", "tenant", "grpcx", "agent"}) {
    INFO(name);
    CHECK_FALSE(IsReservedGrpcBranchHeader(name));
  }
}

TEST_CASE("a parsed query that repeats a protocol key names it", "[common][protocol_keys]") {
  using Params = std::multimap<std::string, std::string>;
  CHECK(RepeatedProtocolKey(Params{{"gid", "VICTIM"}, {"gid", "g1"}}) == "gid");
  CHECK(RepeatedProtocolKey(Params{{"GID", "VICTIM"}, {"gid", "g1"}}) == "gid");
  CHECK(RepeatedProtocolKey(Params{{"gid", "g1"}, {"op", "confirm"}, {"Op", "cancel"}}) == "op");
  CHECK(RepeatedProtocolKey(Params{{"phase2_url", "a"}, {"phase2_url", "b"}}) == "phase2_url");
  CHECK(RepeatedProtocolKey(Params{{"dtm", "a"}, {"DTM", "b"}}) == "dtm");
  // An empty value still counts: the participant must not guess which one was meant.
  CHECK(RepeatedProtocolKey(Params{{"branch_id", ""}, {"branch_id", "02"}}) == "branch_id");
  // Several repeated: the first in the protocol's order, whatever the query's.
  CHECK(RepeatedProtocolKey(Params{{"op", "a"},
                                   {"branch_id", "01"},
                                   {"op", "b"},
                                   {"gid", "x"},
                                   {"branch_id", "02"},
                                   {"gid", "y"}}) == "gid");

  // Each key once, and other names repeated, are fine.
  CHECK_FALSE(RepeatedProtocolKey(Params{{"gid", "g1"},
                                         {"trans_type", "tcc"},
                                         {"branch_id", "01"},
                                         {"op", "try"},
                                         {"branch_type", "try"},
                                         {"phase2_url", "u"},
                                         {"dtm", "d"}}));
  CHECK_FALSE(RepeatedProtocolKey(Params{{"account", "1"}, {"account", "2"}, {"gid", "g"}}));
  CHECK_FALSE(RepeatedProtocolKey(Params{}));
}

TEST_CASE("gRPC metadata that repeats a dtm-* key names it, lowercase", "[common][protocol_keys]") {
  CHECK(RepeatedDtmMetadataKey({"dtm-gid", "dtm-op", "dtm-gid"}) == "dtm-gid");
  CHECK(RepeatedDtmMetadataKey({"DTM-OP", "dtm-op"}) == "dtm-op");
  CHECK(RepeatedDtmMetadataKey({"dtm-anything", "x", "dtm-anything"}) == "dtm-anything");
  CHECK_FALSE(RepeatedDtmMetadataKey(
      {"dtm-gid", "dtm-trans_type", "dtm-branch_id", "dtm-op", "dtm-dtm", "dtm-phase2_url"}));
  CHECK_FALSE(RepeatedDtmMetadataKey({"x-tenant", "x-tenant", "dtm-gid"}));
  CHECK_FALSE(RepeatedDtmMetadataKey({}));
}

TEST_CASE("TargetWith builds the same target from a list or a vector", "[common][url]") {
  const auto url = ParseUrl("http://bank/x?tenant=7");
  REQUIRE(url);
  const std::vector<std::pair<std::string, std::string>> params = {
      {"gid", "g 1"}, {"op", "try"}, {"phase2_url", "http://p/x?a=1"}};
  CHECK(url->TargetWith(params) ==
        url->TargetWith({{"gid", "g 1"}, {"op", "try"}, {"phase2_url", "http://p/x?a=1"}}));
  CHECK(url->TargetWith(params) ==
        "/x?tenant=7&gid=g%201&op=try&phase2_url=http%3A%2F%2Fp%2Fx%3Fa%3D1");
  const auto open = ParseUrl("http://bank/x?");
  REQUIRE(open);
  CHECK(open->TargetWith(params).starts_with("/x?gid="));
}

TEST_CASE("FormDecode decodes '+' and %XX once, and leaves a broken escape", "[common][url]") {
  CHECK(FormDecode("a+b%20c") == "a b c");
  CHECK(FormDecode("%67%69%64") == "gid");
  CHECK(FormDecode("%2567") == "%67");
  CHECK(FormDecode("100%") == "100%");
  CHECK(FormDecode("%g1%4") == "%g1%4");
}

}  // namespace
}  // namespace settle
