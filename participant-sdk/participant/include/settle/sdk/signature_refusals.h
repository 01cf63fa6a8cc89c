#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

#include "settle/signing/refusal_kind.h"

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

}  // namespace settle::sdk
