#include "settle/sdk/participant_counts.h"

namespace settle::sdk {
namespace {

// One metric with its HELP and TYPE lines; names and help are this file's constants.
void Write(std::string& text, const char* name, const char* type, const char* help,
           std::uint64_t value) {
  text += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n" +
          name + " " + std::to_string(value) + "\n";
}

}  // namespace

std::string ParticipantCountsText(const ParticipantCounts& counts) {
  std::string text;
  Write(text, "settle_participant_connections", "gauge", "Client connections open now.",
        counts.open_connections);
  Write(text, "settle_participant_max_connections", "gauge",
        "Client connections allowed at once (max_connections, fitted to the descriptor limit).",
        counts.max_connections);
  Write(text, "settle_participant_connections_refused_total", "counter",
        "Connections answered 503 and closed at max_connections or max_connections_per_peer.",
        counts.refused_connections);
  Write(text, "settle_participant_requests_timed_out_total", "counter",
        "Requests answered 408 and closed: not whole within request_timeout, or stalled.",
        counts.timed_out_requests);
  return text;
}

}  // namespace settle::sdk
