#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace settle::sdk {

// What a Participant's server has refused and cut at the bounds of ParticipantOptions (its
// metrics, Participant::bound_counts), and the connection cap in force: a plain value.
struct ParticipantCounts {
  std::size_t open_connections = 0;
  // ParticipantOptions::max_connections, or lower when it did not fit the process's
  // descriptor limit (net/descriptor_budget.h).
  std::size_t max_connections = 0;
  // Answered 503 and closed: max_connections, or max_connections_per_peer from one address,
  // were open.
  std::uint64_t refused_connections = 0;
  // Answered 408 and closed: not whole within request_timeout, or stalled mid-request.
  std::uint64_t timed_out_requests = 0;
};

// `counts` in Prometheus's text exposition format (version 0.0.4), each with its HELP and TYPE
// lines:
//   settle_participant_connections 3
//   settle_participant_max_connections 10000
//   settle_participant_connections_refused_total 0
//   settle_participant_requests_timed_out_total 0
// For a route the service serves itself, beside SignatureRefusalsText.
std::string ParticipantCountsText(const ParticipantCounts& counts);

}  // namespace settle::sdk
