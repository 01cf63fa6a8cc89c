// The metric of signature refusals (settle/sdk/signature_refusals.h): counted by kind from any
// thread, summed across servers, and written in Prometheus's text format.
#include "settle/sdk/signature_refusals.h"

#include <catch2/catch.hpp>
#include <string>
#include <thread>
#include <vector>

namespace settle::sdk {
namespace {

using signing::RefusalKind;

TEST_CASE("refusals counted from many threads at once are each counted under their kind",
          "[sdk][metrics]") {
  SignatureRefusalCounter counter;
  constexpr int kEach = 10000;
  std::vector<std::thread> threads;
  for (RefusalKind kind : {RefusalKind::kUnsigned, RefusalKind::kOutsideWindow,
                           RefusalKind::kOutsideWindow, RefusalKind::kBadSignature}) {
    threads.emplace_back([&counter, kind] {
      for (int i = 0; i < kEach; ++i) counter.Count(kind);
    });
  }
  for (std::thread& thread : threads) thread.join();

  const SignatureRefusalCounts counts = counter.Snapshot();
  CHECK(counts.of(RefusalKind::kUnsigned) == kEach);
  CHECK(counts.of(RefusalKind::kOutsideWindow) == 2 * kEach);
  CHECK(counts.of(RefusalKind::kBadSignature) == kEach);
  CHECK(counts.of(RefusalKind::kUnknownKey) == 0);
  CHECK(counts.total() == 4 * kEach);
}

TEST_CASE("the counts of two servers add up to one metric, every reason written",
          "[sdk][metrics]") {
  SignatureRefusalCounter http;
  SignatureRefusalCounter grpc;
  http.Count(RefusalKind::kAuthorityMismatch);
  grpc.Count(RefusalKind::kAuthorityMismatch);
  grpc.Count(RefusalKind::kNotCovered);
  SignatureRefusalCounts both = http.Snapshot();
  both += grpc.Snapshot();
  CHECK(both.of(RefusalKind::kAuthorityMismatch) == 2);
  CHECK(both.of(RefusalKind::kNotCovered) == 1);
  CHECK(both.total() == 3);

  CHECK(SignatureRefusalsText(SignatureRefusalCounts{}) ==
        "# HELP settle_participant_signature_refusals_total Branch calls refused for their "
        "signature, by reason (docs/operations.md, Signed calls to participants).\n"
        "# TYPE settle_participant_signature_refusals_total counter\n"
        "settle_participant_signature_refusals_total{reason=\"unsigned\"} 0\n"
        "settle_participant_signature_refusals_total{reason=\"malformed\"} 0\n"
        "settle_participant_signature_refusals_total{reason=\"not_covered\"} 0\n"
        "settle_participant_signature_refusals_total{reason=\"unknown_key\"} 0\n"
        "settle_participant_signature_refusals_total{reason=\"wrong_algorithm\"} 0\n"
        "settle_participant_signature_refusals_total{reason=\"outside_window\"} 0\n"
        "settle_participant_signature_refusals_total{reason=\"digest_mismatch\"} 0\n"
        "settle_participant_signature_refusals_total{reason=\"bad_signature\"} 0\n"
        "settle_participant_signature_refusals_total{reason=\"authority_mismatch\"} 0\n");
}

TEST_CASE("a refused call is logged in one line: who sent it, what it named, and why",
          "[sdk][signing][metrics]") {
  const signing::Verdict verdict = signing::Verdict::Refuse(
      signing::RefusalKind::kAuthorityMismatch, "signed for authority \"c.example:8081\"");
  CHECK(RefusalLogLine(RefusedCall{.server = "settle participant",
                                   .call = "POST /api/TransIn",
                                   .peer = "10.0.0.5:41234",
                                   .gid = "g1",
                                   .branch_id = "01",
                                   .op = "action"},
                       verdict) ==
        "settle participant: refused POST /api/TransIn from 10.0.0.5:41234 gid=g1 branch=01 "
        "op=action: signature (authority_mismatch): signed for authority \"c.example:8081\"");
  // What a caller sent cannot start a line of its own, nor fill the log.
  const std::string line =
      RefusalLogLine(RefusedCall{.server = "settle grpc participant",
                                 .call = "/bank.Bank/TransIn",
                                 .peer = "ipv4:127.0.0.1:5000",
                                 .gid = "g1\nsettle participant: accepted everything",
                                 .branch_id = std::string(300, 'b'),
                                 .op = ""},
                     verdict);
  CHECK(line.find('\n') == std::string::npos);
  CHECK_THAT(line, Catch::Contains("gid=g1?settle participant: accepted everything branch=" +
                                   std::string(128, 'b') + "... op=-:"));
}

}  // namespace
}  // namespace settle::sdk
