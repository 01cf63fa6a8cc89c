#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

#include "settle/signing/refusal_kind.h"
#include "settle/signing/verdict.h"

namespace settle::sdk {

// The metric of a server's signature refusals (SignedCalls): how many calls it refused, by
// kind (signing/refusal_kind.h), exported in Prometheus's text format on a route the service
// serves itself (participant-sdk/README.md, "Counting refusals").

// A snapshot of the counts: a plain value.
struct SignatureRefusalCounts {
  // Indexed as signing::kRefusalKinds; read it through of().
  std::array<std::uint64_t, signing::kRefusalKinds.size()> by_kind{};

  std::uint64_t of(signing::RefusalKind kind) const;
  // Every kind's.
  std::uint64_t total() const;
  // Adds `other`'s: one metric for a service's HTTP participant and gRPC server together.
  SignatureRefusalCounts& operator+=(const SignatureRefusalCounts& other);
  bool operator==(const SignatureRefusalCounts&) const = default;
};

// The counts as refusals happen. Thread-safe and lock-free: Count from any number of threads
// while others take snapshots (a snapshot taken while a refusal is counted may miss it).
class SignatureRefusalCounter {
 public:
  void Count(signing::RefusalKind kind);
  SignatureRefusalCounts Snapshot() const;

 private:
  std::array<std::atomic<std::uint64_t>, signing::kRefusalKinds.size()> counts_{};
};

// The metric's name, and the content type of its text.
inline constexpr std::string_view kSignatureRefusalsMetric =
    "settle_participant_signature_refusals_total";
inline constexpr std::string_view kPrometheusTextContentType =
    "text/plain; version=0.0.4; charset=utf-8";

// `counts` in Prometheus's text exposition format (version 0.0.4): the HELP and TYPE (counter)
// lines, then one sample per kind in kRefusalKinds' order, zeros included, labelled with the
// kind's name:
//   settle_participant_signature_refusals_total{reason="outside_window"} 3
// Written here rather than with common/metrics, which the SDK does not link (it is settled's
// own room and not installed with the SDK).
std::string SignatureRefusalsText(const SignatureRefusalCounts& counts);

// A call a server refused for its signature, as its log line names it: the values as they
// arrived (any bytes; RefusalLogLine makes them printable).
struct RefusedCall {
  std::string_view server;  // "settle participant", "settle grpc participant"
  std::string_view call;    // "POST /api/TransIn", "/bank.Bank/TransIn"
  std::string_view peer;    // the caller's address and port, "127.0.0.1:53412"
  std::string_view gid;     // the gid, branch id and op the call named, empty when none
  std::string_view branch_id;
  std::string_view op;
};

// The one line a server logs for each refused call (no newline at its end):
//   settle participant: refused POST /api/TransIn from 127.0.0.1:53412 gid=g1 branch=01
//   op=confirm: signature (authority_mismatch): signed for authority "10.0.0.8:8081" ...
// Each value is cut to 128 bytes (the reason to 400) and every byte outside printable ASCII (a
// newline, say) is written as '?', so that a caller cannot forge lines of the log; a missing one is
// "-".
std::string RefusalLogLine(const RefusedCall& call, const signing::Verdict& verdict);

}  // namespace settle::sdk
