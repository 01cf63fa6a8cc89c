// The options of --help's "Limits" group (option_groups.h).
#include "option_groups.h"

#include <CLI/CLI.hpp>

#include <cstddef>
#include <string>

#include "settle/api/rate_limiter.h"
#include "settle/core/duration_text.h"

namespace settle::app {

void AddLimitsOptions(CLI::App& app, ServerConfig& c, ParsedText& text) {
  app.option_defaults()->group(kLimits);
  app.add_option("--max-body-bytes", c.api.max_body_bytes,
                 "Largest request body accepted; a larger one is refused with 413")
      ->check(CLI::Range(std::size_t{1024}, std::size_t{64} << 20))
      ->capture_default_str();
  app.add_option("--max-answer-bytes", c.api.max_answer_bytes,
                 "Largest answer of query, all and topics: a longer one is cut into pages that "
                 "a client follows with next_position (a page shows at least one item)")
      ->check(CLI::Range(std::size_t{64} << 10, std::size_t{1} << 30))
      ->capture_default_str();
  app.add_option("--max-connections", c.api.max_connections,
                 "Open client connections beyond which new ones are refused with 503; a "
                 "default that does not fit the descriptor limit (raised to its hard limit at "
                 "start, a quarter kept for the store, branch calls and logs) is lowered, a "
                 "given one stops settled")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1'000'000}))
      ->capture_default_str();
  app.add_option("--max-connections-per-peer", c.api.max_connections_per_peer,
                 "Open connections from one client address (an IPv6 /64) beyond which new ones "
                 "are refused with 503, so that one host cannot fill --max-connections; behind "
                 "a proxy, raise it and cap clients at the proxy (0: no cap)")
      ->check(CLI::Range(std::size_t{0}, std::size_t{1'000'000}))
      ->capture_default_str();
  AddDurationOptions(app, text.durations, kLimits);
  app.add_option_function<std::string>(
         api::RateLimiter::kFlag,
         [&c](const std::string& text) {
           Result<api::RateLimit> limit = api::RateLimit::Parse(text);
           if (!limit) throw CLI::ValidationError(limit.status().message());
           c.rate_limit = *limit;
         },
         "Requests a second one caller (a token's name, else a peer address) may make on the "
         "HTTP and gRPC APIs together, RATE or RATE/BURST (e.g. 200/400; BURST defaults to "
         "RATE); more get 429 (RESOURCE_EXHAUSTED) with Retry-After; /api/ping is not limited "
         "(0: no limit)")
      ->default_str(c.rate_limit.ToString());
  app.add_option_function<std::string>(
         "--max-timeout-to-fail",
         [&c](const std::string& text) {
           Result<Duration> max = ParseDuration(text);
           if (!max) throw CLI::ValidationError("--max-timeout-to-fail: " + max.status().message());
           c.coordinator.max_timeout_to_fail = *max;
         },
         "Longest timeout_to_fail (and message delay) a transaction may ask for; a longer one "
         "is refused with 400 naming the field (0: ten years, the protocol's own; e.g. 1h, 7d)")
      ->default_str(FormatDuration(c.coordinator.max_timeout_to_fail));
  app.add_option_function<std::string>(
         "--max-branch-timeout",
         [&c](const std::string& text) {
           Result<Duration> max = ParseDuration(text);
           if (!max) throw CLI::ValidationError("--max-branch-timeout: " + max.status().message());
           c.coordinator.max_branch_timeout = *max;
         },
         "Longest request_timeout (one branch call, which holds a connection and a pass that "
         "long) a transaction may ask for; a longer one is refused with 400 naming the field; "
         "at least --branch-timeout (0: no ceiling; e.g. 30s, 5m)")
      ->default_str(FormatDuration(c.coordinator.max_branch_timeout));
  app.add_flag("--strict-requests", c.coordinator.strict_requests,
               "Refuse (400) a request with a member this coordinator does not know, other than "
               "those DTM's client SDKs send, instead of ignoring it and naming it in the "
               "answer's Settle-Ignored-Fields header and the log");
  app.add_option("--quota-unfinished", c.coordinator.quotas.unfinished,
                 "With tokens or client certificates: unfinished transactions one client caller "
                 "(a token's or certificate's name) may hold; one more is refused with 429 "
                 "(0: no limit)")
      ->check(CLI::Range(std::size_t{0}, std::size_t{1'000'000'000}))
      ->capture_default_str();
  app.add_option("--quota-unfinished-bytes", c.coordinator.quotas.bytes,
                 "With tokens or client certificates: bytes one client caller's unfinished "
                 "transactions may hold (payloads, URLs, headers); more are refused with 429 "
                 "(0: no limit)")
      ->check(CLI::Range(std::size_t{0}, std::size_t{1} << 50))
      ->capture_default_str();
}

}  // namespace settle::app
