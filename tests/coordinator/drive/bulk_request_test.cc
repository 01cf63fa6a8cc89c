// What an operator's bulk request must say (drive/bulk_request.h): a reason, a filter that
// names some transactions (or all=true), and for a redirect two participant hosts of one
// protocol; how a job stores its filter; and how a url moves from one host to another.
#include <catch2/catch.hpp>

#include <string>

#include "settle/drive/bulk_request.h"

namespace settle::drive {
namespace {

BulkRequest Pause() {
  BulkRequest r;
  r.action = BulkAction::kPause;
  r.filter.status = GlobalStatus::kSubmitted;
  r.reason = "participant down, OPS-3";
  return r;
}

std::string Refusal(BulkRequest r) {
  const Status s = CheckBulkRequest(r);
  REQUIRE(s.code() == StatusCode::kInvalidArgument);
  return std::string(s.message());
}

TEST_CASE("a bulk request is refused with the field that is wrong", "[bulk]") {
  // A dry run needs no reason: a job does (BulkJobs::Start).
  BulkRequest no_reason = Pause();
  no_reason.reason.clear();
  CHECK(CheckBulkRequest(no_reason).ok());

  BulkRequest everything = Pause();
  everything.filter = {};
  CHECK(Refusal(everything).starts_with("filter: empty"));
  everything.all = true;
  CHECK(CheckBulkRequest(everything).ok());

  BulkRequest hosts_on_pause = Pause();
  hosts_on_pause.to = "http://b:1";
  CHECK(Refusal(hosts_on_pause).starts_with("to: only a redirect"));
}

TEST_CASE("a redirect names two hosts of one protocol and filters on the first", "[bulk]") {
  BulkRequest r;
  r.action = BulkAction::kRedirect;
  r.reason = "bank moved";
  r.from = "HTTP://Bank:80/";
  r.to = "https://new-bank";
  REQUIRE(CheckBulkRequest(r).ok());
  CHECK(r.from == "http://bank:80");
  CHECK(r.to == "https://new-bank:443");
  CHECK(r.filter.host == "http://bank:80");

  BulkRequest path = r;
  path.from = "http://bank:80/api";
  CHECK(Refusal(path).starts_with("from: "));
  BulkRequest grpc = r;
  grpc.from = "http://bank:80";
  grpc.to = "grpc://bank:50051";
  CHECK(Refusal(grpc).starts_with("to: grpc://bank:50051 does not speak"));
  BulkRequest same = r;
  same.from = "http://bank";
  same.to = "http://BANK:80";
  CHECK(Refusal(same).starts_with("to: the same host"));
  BulkRequest other_host = r;
  other_host.from = "http://bank:80";
  other_host.to = "http://b2:80";
  other_host.filter.host = "http://elsewhere:80";
  CHECK(Refusal(other_host).starts_with("filter.host: "));
  BulkRequest nothing = r;
  nothing.to = "";
  CHECK(Refusal(nothing).starts_with("to: expected"));
}

TEST_CASE("a job's filter is stored and read back whole", "[bulk]") {
  storage::ListQuery f;
  f.status = GlobalStatus::kAborting;
  f.trans_type = TransType::kXa;
  f.stuck = true;
  f.paused = false;
  f.gid_prefix = "ord-";
  f.create_time_start = FromUnixMillis(1'700'000'000'000);
  f.create_time_end = FromUnixMillis(1'700'000'600'000);
  f.host = "grpc://bank:50051";
  auto back = DecodeFilter(EncodeFilter(f));
  REQUIRE(back);
  CHECK(back->status == f.status);
  CHECK(back->trans_type == f.trans_type);
  CHECK(back->stuck == f.stuck);
  CHECK(back->paused == f.paused);
  CHECK(back->gid_prefix == f.gid_prefix);
  CHECK(back->create_time_start == f.create_time_start);
  CHECK(back->create_time_end == f.create_time_end);
  CHECK(back->host == f.host);
  CHECK(EncodeFilter(storage::ListQuery{}) == "{}");
  CHECK_FALSE(DecodeFilter(R"({"limit":5})"));
  CHECK_FALSE(DecodeFilter(R"({"status":"sleeping"})"));
  CHECK_FALSE(DecodeFilter("[]"));
}

TEST_CASE("a url moves to another host with its path and query, in its own form", "[bulk]") {
  const std::string from = "http://bank:8080";
  CHECK(RebaseUrl("http://BANK:8080/api/out?acct=7", from, "https://nb:443") ==
        "https://nb:443/api/out?acct=7");
  CHECK(RebaseUrl("http://bank:8080", from, "http://nb:80") == "http://nb:80");
  CHECK_FALSE(RebaseUrl("http://bank:8081/api", from, "http://nb:80"));
  CHECK_FALSE(RebaseUrl("http://bank/api", from, "http://nb:80"));  // port 80: another host
  CHECK(RebaseUrl("http://bank/api", "http://bank:80", "http://nb:81") == "http://nb:81/api");
  // DTM's gRPC form keeps having no scheme on a plaintext host, and gets one on a TLS host.
  CHECK(RebaseUrl("bank:50051/pkg.Svc/Do", "grpc://bank:50051", "grpc://nb:50052") ==
        "nb:50052/pkg.Svc/Do");
  CHECK(RebaseUrl("bank:50051/pkg.Svc/Do", "grpc://bank:50051", "grpcs://nb:443") ==
        "grpcs://nb:443/pkg.Svc/Do");
}

}  // namespace
}  // namespace settle::drive
