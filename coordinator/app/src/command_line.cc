#include "settle/app/command_line.h"

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "settle/api/rate_limiter.h"
#include "settle/core/duration_text.h"
#include "settle/core/file_text.h"
#include "settle/core/url.h"
#include "settle/net/client.h"
#include "settle/net/server.h"
#include "settle/signing/keys.h"
#include "settle/telemetry/otlp_exporter.h"

namespace settle::app {
namespace {

// The groups of --help, in the order it lists them (after help itself, --version, --config
// and --dump-config).
constexpr const char* kListening = "Listening";
constexpr const char* kStorage = "Storage";
constexpr const char* kClients = "Clients and tokens";
constexpr const char* kTls = "TLS";
constexpr const char* kSigning = "Signing";
constexpr const char* kBranchCalls = "Branch calls";
constexpr const char* kLimits = "Limits";
constexpr const char* kGrpcLimits = "gRPC limits";
constexpr const char* kRunning = "Running";
constexpr const char* kCluster = "Several settled on one PostgreSQL";
constexpr const char* kAlerts = "Alerts";
constexpr const char* kLogs = "Logs";
constexpr const char* kTracing = "Tracing";

struct DurationFlag {
  const char* name;
  const char* group;  // of --help (CLI11's option group)
  const char* help;
  Duration* target;
  std::string text;
};

Status AddAll(api::AccessTokens& tokens, api::Access level, const std::vector<std::string>& values,
              const char* flag) {
  for (const std::string& token : values) {
    if (Status s = tokens.Add(level, token); !s.ok()) {
      return Status::InvalidArgument(std::string(flag) + ": " + s.message());
    }
  }
  return Status::Ok();
}

Status CollectTokens(api::AccessTokens& tokens, const std::vector<std::string>& read,
                     const std::vector<std::string>& client, const std::vector<std::string>& admin,
                     const std::string& file) {
  if (Status s = AddAll(tokens, api::Access::kRead, read, "--read-token"); !s.ok()) return s;
  if (Status s = AddAll(tokens, api::Access::kClient, client, "--client-token"); !s.ok()) return s;
  if (Status s = AddAll(tokens, api::Access::kAdmin, admin, "--admin-token"); !s.ok()) return s;
  if (file.empty()) return Status::Ok();
  Result<std::string> text = ReadFileText(file);
  if (!text) return Status::InvalidArgument("--token-file: " + text.status().message());
  if (Status s = tokens.AddFromText(*text); !s.ok()) {
    return Status::InvalidArgument("--token-file " + file + ": " + s.message());
  }
  return Status::Ok();
}

// The flags whose values are read as text and checked after parsing.
struct ParsedText {
  std::vector<DurationFlag> durations;
  std::vector<std::string> read_tokens;
  std::vector<std::string> client_tokens;
  std::vector<std::string> admin_tokens;
  std::string token_file;
  std::string signing_key_file;
  std::string client_certificates_file;
  std::string otlp_endpoint;
  std::vector<std::string> otlp_headers;
};

std::vector<DurationFlag> DurationFlags(ServerConfig& c) {
  return {
      {"--retry-interval",
       kBranchCalls,
       "Default wait before the first retry of a failed branch call, when a transaction does "
       "not set retry_interval; doubles per consecutive failure",
       &c.coordinator.retry_interval,
       {}},
      {"--retry-max",
       kBranchCalls,
       "Cap of the doubling retry interval",
       &c.retry.max_interval,
       {}},
      {"--circuit-probe-max",
       kBranchCalls,
       "Cap of the doubling wait between probes of a participant host whose circuit is open "
       "(the first wait is --circuit-probe-first)",
       &c.hosts.circuit.probe_max,
       {}},
      {"--circuit-probe-first",
       kBranchCalls,
       "First wait of a participant host's open circuit before its probe (1s; at most "
       "--circuit-probe-max, which a longer one is taken as); each failed probe doubles it",
       &c.hosts.circuit.probe_initial,
       {}},
      {"--branch-timeout",
       kBranchCalls,
       "Default timeout of each branch call, when a transaction does not set request_timeout",
       &c.coordinator.request_timeout,
       {}},
      {"--tcc-timeout",
       kBranchCalls,
       "Default timeout_to_fail of a TCC, XA or message: a TCC or XA still prepared this long "
       "after prepare is aborted; a message still prepared is checked with its query_prepared",
       &c.coordinator.prepared_timeout_to_fail,
       {}},
      {"--retention",
       kStorage,
       "Delete finished transactions this long after they finished, in the background in "
       "small batches (0: keep them forever)",
       &c.retention.keep,
       {}},
      {"--io-timeout",
       kLimits,
       "A client that sends nothing this long in the middle of a request gets 408 and is "
       "disconnected; one that stalls reading its answer is disconnected",
       &c.api.io_timeout,
       {}},
      {"--keep-alive-timeout",
       kLimits,
       "An idle client connection is closed after this long",
       &c.api.keep_alive_timeout,
       {}},
      {"--request-timeout",
       kLimits,
       "A request's head and body must all arrive within this of its first byte, however "
       "they are spread out; a client still sending then gets 408 and is disconnected",
       &c.api.request_timeout,
       {}},
      {"--lease",
       kCluster,
       "With a postgresql:// store shared by several settled: how long this instance's lease "
       "lasts after each renewal; if it dies, others take its transactions over after this. "
       "Branch calls are cut to fit in it",
       &c.lease.lease,
       {}},
      {"--lease-poll",
       kCluster,
       "With a postgresql:// store: how often the lease is renewed and the database is "
       "searched for transactions to drive",
       &c.lease.poll,
       {}},
      {"--max-clock-skew",
       kCluster,
       "With a postgresql:// store: every time is taken from the database's clock, read at "
       "each lease renewal; if this host's own clock is further than this from the database's, "
       "the instance stops claiming transactions (others drive them) until it comes back "
       "(0: never)",
       &c.clock_skew.max,
       {}},
      {"--shutdown-grace",
       kRunning,
       "On SIGTERM/SIGINT, how long in-flight branch calls may take to finish; the rest are "
       "resent after the next start",
       &c.shutdown_grace,
       {}},
  };
}

// The duration flags of `group`.
void AddDurationOptions(CLI::App& app, std::vector<DurationFlag>& durations, const char* group) {
  for (DurationFlag& flag : durations) {
    if (std::string_view(flag.group) != group) continue;
    flag.text = flag.target->count() == 0 ? "0" : FormatDuration(*flag.target);
    app.add_option(flag.name, flag.text, std::string(flag.help) + " (e.g. 500ms, 3s, 1m)")
        ->capture_default_str();
  }
}

// Where settled listens: the HTTP API and DTM's gRPC API.
void AddListeningOptions(CLI::App& app, ServerConfig& c, ParsedText& text) {
  app.option_defaults()->group(kListening);
  app.add_option("--host", c.host, "Address to listen on")->capture_default_str();
  app.add_option("--port", c.port, "Port to listen on (0: any free port)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  app.add_option_function<int>(
         "--grpc-port",
         [&c](int port) {
           c.grpc.enabled = port != 0;
           c.grpc.port = port;
         },
         "Port of DTM's gRPC API (dtmgimp.Dtm), on --host, with the same TLS files and tokens "
         "(0: off)")
      ->check(CLI::Range(0, 65535))
      ->default_str(std::to_string(c.grpc.port));
}

// Where transactions are kept, and for how long.
void AddStorageOptions(CLI::App& app, ServerConfig& c, ParsedText& text) {
  app.option_defaults()->group(kStorage);
  app.add_option("--store,--db", c.db_path,
                 "Where transactions are stored: an SQLite file, created on first start, or a "
                 "postgresql://user:password@host:port/database URL, which several settled "
                 "instances may share")
      ->capture_default_str();
  app.add_option_function<std::int64_t>(
         "--commit-delay-us",
         [&c](std::int64_t us) { c.store.commit_delay = std::chrono::microseconds(us); },
         "Under steady load, how long the database writer waits for more transactions to share "
         "the next fsync: fewer fsyncs for more latency, for a disk shared with other syncing "
         "processes (0: never wait)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{100'000}))
      ->default_str(std::to_string(c.store.commit_delay.count()));
  AddDurationOptions(app, text.durations, kStorage);
}

// Who may call the API: bearer tokens and client certificates (docs/operations.md,
// "Authentication" and "Client certificates").
void AddClientsAndTokensOptions(CLI::App& app, ServerConfig& c, ParsedText& text) {
  app.option_defaults()->group(kClients);
  app.add_option("--read-token", text.read_tokens,
                 "Bearer token that may read transactions and metrics (repeatable); once any "
                 "token is set, every route but /api/ping needs one")
      ->envname("SETTLE_READ_TOKEN");
  app.add_option("--client-token", text.client_tokens,
                 "Bearer token that may also run transactions: what services' SDKs send "
                 "(repeatable)")
      ->envname("SETTLE_CLIENT_TOKEN");
  app.add_option("--admin-token", text.admin_tokens,
                 "Bearer token that may also force-stop and retry any transaction (repeatable)")
      ->envname("SETTLE_ADMIN_TOKEN");
  app.add_option("--token-file", text.token_file,
                 "File of \"<read|client|admin> <token>\" lines, one per token; safer than "
                 "flags, which other users can see in the process list")
      ->envname("SETTLE_TOKEN_FILE")
      ->check(CLI::ExistingFile);
  app.add_option("--tls-client-ca", c.api.tls.client_ca_file,
                 "PEM CA certificates: the API's HTTPS and gRPC ports ask every client for a "
                 "certificate from them (mutual TLS); one from another CA, or expired, is "
                 "refused at the handshake. Needs --tls-cert")
      ->check(CLI::ExistingFile);
  app.add_flag("--require-client-cert", c.api.tls.require_client_certificate,
               "With --tls-client-ca: refuse a connection without a client certificate at the "
               "handshake, so that certificates are required instead of tokens");
  app.add_option("--client-certificates", text.client_certificates_file,
                 "With --tls-client-ca: file of \"<read|client|admin> <subject> [# name]\" "
                 "lines mapping certificate subjects (RFC 2253, as openssl x509 -noout -subject "
                 "-nameopt RFC2253 prints them) to access levels and names, beside tokens")
      ->envname("SETTLE_CLIENT_CERTIFICATES")
      ->check(CLI::ExistingFile);
}

// settled's own certificate, and those it verifies and presents on its calls.
void AddTlsOptions(CLI::App& app, ServerConfig& c, ParsedText& text) {
  app.option_defaults()->group(kTls);
  app.add_option("--tls-cert", c.api.tls.cert_file,
                 "PEM certificate chain: with --tls-key, the API is served over HTTPS only")
      ->check(CLI::ExistingFile);
  app.add_option("--tls-key", c.api.tls.key_file, "PEM private key of --tls-cert")
      ->check(CLI::ExistingFile);
  app.add_option("--ca-file", c.ca_file,
                 "PEM CA certificates that https:// participants and webhooks are verified "
                 "against (default: the system's CA store)")
      ->check(CLI::ExistingFile);
  app.add_option("--tls-client-cert", c.tls_client_cert,
                 "PEM certificate chain settled presents on its https:// and grpcs:// calls to "
                 "participants "
                 "and webhooks that ask for one (mutual TLS); with --tls-client-key")
      ->check(CLI::ExistingFile);
  app.add_option("--tls-client-key", c.tls_client_key, "PEM private key of --tls-client-cert")
      ->check(CLI::ExistingFile);
}

// Signed calls to participants (docs/protocol.md §4.9).
void AddSigningOptions(CLI::App& app, ServerConfig& c, ParsedText& text) {
  app.option_defaults()->group(kSigning);
  app.add_option("--signing-key", text.signing_key_file,
                 "Sign every call to a participant with this key (RFC 9421; docs/protocol.md "
                 "4.9): an Ed25519 private key in PEM (openssl genpkey -algorithm ed25519) or an "
                 "HMAC-SHA256 secret declared as such, hmac:<base64> (echo \"hmac:$(openssl rand "
                 "-base64 32)\"); any other file is refused")
      ->envname("SETTLE_SIGNING_KEY")
      ->check(CLI::ExistingFile);
  app.add_flag("--unsigned-authority", c.unsigned_authority,
               "With --signing-key: leave the Host (@authority; over gRPC the :authority) out "
               "of the signature, for participants behind a proxy that rewrites it");
}

// How branches are called and retried, and the gates of participant hosts.
void AddBranchCallsOptions(CLI::App& app, ServerConfig& c, ParsedText& text) {
  app.option_defaults()->group(kBranchCalls);
  AddDurationOptions(app, text.durations, kBranchCalls);
  app.add_option("--stuck-after", c.retry.stuck_after,
                 "Consecutive failures of one branch after which its transaction is flagged "
                 "stuck (retries go on)")
      ->check(CLI::Range(1, 1'000'000))
      ->capture_default_str();
  app.add_option("--pause-after", c.retry.pause_after,
                 "Consecutive failures of one branch after which its transaction is paused "
                 "(parked) for an operator instead of retried, with an alert; a transaction's "
                 "custom_data \"pause_after\" overrides it (0: never)")
      ->check(CLI::Range(0, 1'000'000))
      ->capture_default_str();
  app.add_option("--circuit-failures", c.hosts.circuit.failures,
                 "Consecutive connection failures, timeouts or 5xx answers from one participant "
                 "host (scheme, host, port) that open its circuit: its calls then wait for a "
                 "probe to succeed instead of retrying one by one (0: no circuits)")
      ->check(CLI::Range(0, 1'000'000))
      ->capture_default_str();
  app.add_option("--circuit-release-rate", c.hosts.release_per_second,
                 "When the circuit of a participant host closes, the transactions that waited "
                 "for it resume oldest first at most this many a second (and within "
                 "--host-max-in-flight), so the recovered service is not flattened (0: as fast "
                 "as the cap allows)")
      ->check(CLI::Range(0, 1'000'000))
      ->capture_default_str();
  app.add_option("--host-max-in-flight", c.hosts.max_in_flight,
                 "Branch calls in flight to one participant host at most, at all times: a "
                 "transaction that would exceed it waits its turn without holding a pass, so "
                 "one slow participant cannot take every connection (0: no cap)")
      ->check(CLI::Range(0, 1'000'000))
      ->capture_default_str();
  app.add_option("--max-hosts", c.hosts.max_hosts,
                 "Participant hosts (scheme, host, port) with a gate of their own, circuit and "
                 "metric series; the hosts beyond share one, host=\"other\"; a gate idle for "
                 "10 minutes is forgotten (0: no cap)")
      ->check(CLI::Range(std::size_t{0}, std::size_t{1'000'000}))
      ->capture_default_str();
}

// What a client, hostile or not, may make settled hold or do (docs/operations.md, "Hostile
// clients"), and the quotas of a client-level caller under authentication ("Quotas").
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

// The bounds of the gRPC API's clients (grpc_api::GrpcServerOptions).
void AddGrpcLimitsOptions(CLI::App& app, ServerConfig& c, ParsedText& text) {
  app.option_defaults()->group(kGrpcLimits);
  app.add_option("--grpc-max-connections", c.grpc.max_connections,
                 "Open connections to the gRPC API beyond which a new one is closed as soon as "
                 "it is accepted: the descriptors the gRPC port may take")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1'000'000}))
      ->capture_default_str();
  app.add_option("--grpc-max-connections-per-peer", c.grpc.max_connections_per_peer,
                 "Open connections to the gRPC API from one IP address beyond which a new one "
                 "from it is closed at once (0: no cap of its own; at most "
                 "--grpc-max-connections)")
      ->check(CLI::Range(std::size_t{0}, std::size_t{1'000'000}))
      ->capture_default_str();
  app.add_option_function<std::string>(
         "--grpc-first-message-timeout",
         [&c](const std::string& text) {
           Result<Duration> parsed = ParseDuration(text);
           if (!parsed || parsed->count() <= 0) {
             throw CLI::ValidationError("--grpc-first-message-timeout",
                                        parsed ? "must be more than 0" : parsed.status().message());
           }
           c.grpc.first_message_timeout = *parsed;
         },
         "A gRPC call whose request message has not wholly arrived this long after its headers "
         "is ended with DEADLINE_EXCEEDED; a connection's TLS handshake and HTTP/2 settings "
         "have as long (e.g. 500ms, 3s, 1m)")
      ->default_str(FormatDuration(c.grpc.first_message_timeout));
  app.add_option("--grpc-memory-limit", c.grpc.memory_limit_bytes,
                 "Bytes the gRPC API's connections may take together: gRPC's resource quota, "
                 "and the calls that may wait for their request message at once (96 KiB each); "
                 "a call beyond them is refused with RESOURCE_EXHAUSTED")
      ->check(CLI::Range(std::size_t{1} << 20, std::size_t{64} << 30))
      ->capture_default_str();
}

// Threads, passes and background work, and the shutdown.
void AddRunningOptions(CLI::App& app, ServerConfig& c, ParsedText& text) {
  app.option_defaults()->group(kRunning);
  app.add_option("--io-threads", c.io_threads,
                 "Threads that serve the API, run transaction passes and make branch calls, "
                 "all asynchronously (0: one per core)")
      ->check(CLI::Range(0, 256))
      ->capture_default_str();
  app.add_option("--max-passes", c.max_passes,
                 "Transaction passes run at once (each may hold connections to participants); "
                 "more due transactions wait their turn")
      ->check(CLI::Range(1, 1'000'000))
      ->capture_default_str();
  app.add_option("--bulk-rate", c.bulk_rate,
                 "Transactions a bulk action's job acts on per second, at most (0: no limit)")
      ->check(CLI::Range(0, 1'000'000))
      ->capture_default_str();
  AddDurationOptions(app, text.durations, kRunning);
}

// Instances sharing a postgresql:// store (docs/scaling.md).
void AddClusterOptions(CLI::App& app, ServerConfig& c, ParsedText& text) {
  app.option_defaults()->group(kCluster);
  app.add_option("--instance-id", c.lease.instance_id,
                 "With a postgresql:// store: this instance's name among those sharing it "
                 "(default: <hostname>-<pid>); a restart under the same name takes its "
                 "transactions back at once");
  AddDurationOptions(app, text.durations, kCluster);
}

// The alert webhook.
void AddAlertsOptions(CLI::App& app, ServerConfig& c, ParsedText& text) {
  app.option_defaults()->group(kAlerts);
  app.add_option("--alert-webhook", c.alert_webhook,
                 "http:// or https:// URL to POST a JSON alert to when a transaction becomes "
                 "stuck");
  app.add_option("--alerts-per-creator", c.alerts_per_creator,
                 "Alerts about one creator's transactions (stuck, parked, gave up) the webhook "
                 "gets per minute; the rest are held back and counted in the next (0: no limit)")
      ->check(CLI::Range(0, 1'000'000))
      ->capture_default_str();
}

// settled's log lines.
void AddLogsOptions(CLI::App& app, ServerConfig& c, ParsedText& text) {
  app.option_defaults()->group(kLogs);
  app.add_option("--log-level", c.log_level, "trace, debug, info, warn, error, critical or off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}))
      ->capture_default_str();
  app.add_option("--log-format", c.log_format,
                 "text (a line of time, level and message) or json (an object per line: time, "
                 "level, message, and each key=value of the message as a member); times in UTC")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
}

// OpenTelemetry's export, with the environment variables its SDKs read as the defaults.
void AddTracingOptions(CLI::App& app, ServerConfig& c, ParsedText& text) {
  app.option_defaults()->group(kTracing);
  app.add_option("--otlp-endpoint", text.otlp_endpoint,
                 "Export spans (one per transaction, one per branch call) to this OpenTelemetry "
                 "collector over OTLP/HTTP (JSON): an http(s):// base URL, spans are POSTed to "
                 "its /v1/traces (as OTEL_EXPORTER_OTLP_ENDPOINT, its default, means it)")
      ->envname("OTEL_EXPORTER_OTLP_ENDPOINT");
  app.add_option("--otlp-header", text.otlp_headers,
                 "name=value sent with every export (a collector's API key, say); repeatable, "
                 "or comma-separated as in OTEL_EXPORTER_OTLP_HEADERS, its default")
      ->envname("OTEL_EXPORTER_OTLP_HEADERS")
      ->delimiter(',');
  app.add_option("--otlp-service-name", c.otlp_service_name,
                 "The service.name spans report (default: OTEL_SERVICE_NAME, or settled)")
      ->envname("OTEL_SERVICE_NAME")
      ->capture_default_str();
  app.add_option("--otlp-queue", c.otlp_queue,
                 "Spans waiting for the collector beyond this are dropped (and counted), so that "
                 "a slow collector never slows a transaction")
      ->check(CLI::Range(1, 10'000'000))
      ->capture_default_str();
}

// The client certificate and TLS flags that go with others, and the subject map.
Status ApplyClientCertificates(const ParsedText& text, ServerConfig& c) {
  if (!c.api.tls.client_ca_file.empty() && !c.api.tls.enabled()) {
    return Status::InvalidArgument(
        "--tls-client-ca needs --tls-cert: client certificates are "
        "asked for in the TLS handshake");
  }
  if (c.api.tls.require_client_certificate && c.api.tls.client_ca_file.empty()) {
    return Status::InvalidArgument("--require-client-cert needs --tls-client-ca");
  }
  if (!text.client_certificates_file.empty()) {
    if (c.api.tls.client_ca_file.empty()) {
      return Status::InvalidArgument(
          "--client-certificates needs --tls-client-ca: only a verified certificate's subject "
          "can be trusted");
    }
    Result<std::string> map = ReadFileText(text.client_certificates_file);
    if (!map) return Status::InvalidArgument("--client-certificates: " + map.status().message());
    if (Status s = c.api.client_certificates.AddFromText(*map); !s.ok()) {
      return Status::InvalidArgument("--client-certificates " + text.client_certificates_file +
                                     ": " + s.message());
    }
  }
  if (c.tls_client_cert.empty() != c.tls_client_key.empty()) {
    return Status::InvalidArgument("--tls-client-cert and --tls-client-key go together");
  }
  if (!c.tls_client_cert.empty()) {
    // Loaded here as the client will load them, so that a bad pair is named by its flags.
    auto client = net::Client::Create(
        {.client_cert_file = c.tls_client_cert, .client_key_file = c.tls_client_key});
    if (!client && client.status().code() == StatusCode::kInvalidArgument) {
      return Status::InvalidArgument("--tls-client-cert/--tls-client-key: " +
                                     client.status().message());
    }
  }
  return Status::Ok();
}

// The OTLP endpoint and headers, checked so that a wrong one stops settled at start.
Status ApplyTracing(const ParsedText& text, ServerConfig& c) {
  if (!text.otlp_endpoint.empty()) {
    auto url = telemetry::OtlpTracesUrl(text.otlp_endpoint);
    if (!url) {
      return Status::InvalidArgument("--otlp-endpoint '" + text.otlp_endpoint +
                                     "': " + url.status().message());
    }
    c.otlp_traces_url = std::move(*url);
  }
  c.otlp_headers.clear();
  for (const std::string& entry : text.otlp_headers) {
    auto headers = telemetry::ParseOtlpHeaders(entry);
    if (!headers) return Status::InvalidArgument("--otlp-header: " + headers.status().message());
    c.otlp_headers.insert(c.otlp_headers.end(), headers->begin(), headers->end());
  }
  if (c.otlp_service_name.empty()) {
    return Status::InvalidArgument("--otlp-service-name may not be empty");
  }
  return Status::Ok();
}

// What the parser cannot check by itself: durations, tokens, and flags that go together.
Status ApplyParsedText(const ParsedText& text, ServerConfig& c) {
  for (const DurationFlag& flag : text.durations) {
    auto parsed = ParseDuration(flag.text);
    if (!parsed)
      return Status::InvalidArgument(std::string(flag.name) + ": " + parsed.status().message());
    *flag.target = *parsed;
  }
  if (Status s = CollectTokens(c.api.tokens, text.read_tokens, text.client_tokens,
                               text.admin_tokens, text.token_file);
      !s.ok()) {
    return s;
  }
  if (!text.signing_key_file.empty()) {
    auto key = signing::SigningKey::FromFile(text.signing_key_file);
    if (!key) return Status::InvalidArgument("--signing-key: " + key.status().message());
    c.signing_key = std::move(*key);
    c.signing_key_file = text.signing_key_file;
  }
  if (c.grpc.max_connections_per_peer > c.grpc.max_connections) {
    return Status::InvalidArgument(
        "--grpc-max-connections-per-peer: at most --grpc-max-connections (" +
        std::to_string(c.grpc.max_connections) + ")");
  }
  if (c.unsigned_authority && !c.signing_key) {
    return Status::InvalidArgument("--unsigned-authority goes with --signing-key");
  }
  if (c.lease.poll.count() <= 0 || c.lease.lease < 4 * c.lease.poll) {
    return Status::InvalidArgument(
        "--lease must be at least 4 times --lease-poll, which must be positive");
  }
  if (c.api.tls.cert_file.empty() != c.api.tls.key_file.empty()) {
    return Status::InvalidArgument("--tls-cert and --tls-key go together");
  }
  if (Status s = ApplyClientCertificates(text, c); !s.ok()) return s;
  if (Status s = ApplyTracing(text, c); !s.ok()) return s;
  // Loaded here as the API will load them, so that a bad file stops settled before it opens
  // the database, named by its flag.
  if (Status s = net::CheckTlsFiles(c.api.tls); !s.ok()) {
    return Status::InvalidArgument((c.api.tls.client_ca_file.empty()
                                        ? "--tls-cert/--tls-key: "
                                        : "--tls-cert/--tls-key/--tls-client-ca: ") +
                                   s.message());
  }
  if (c.grpc.enabled && c.grpc.port == c.port && c.port != 0) {
    return Status::InvalidArgument("--grpc-port: " + std::to_string(c.grpc.port) +
                                   " is --port already; the gRPC API needs a port of its own");
  }
  if (!c.alert_webhook.empty()) {
    auto url = ParseUrl(c.alert_webhook);
    if (!url) {
      return Status::InvalidArgument("--alert-webhook '" + c.alert_webhook +
                                     "': " + url.status().message());
    }
  }
  if (c.hosts.circuit.probe_max.count() <= 0) {
    return Status::InvalidArgument("--circuit-probe-max must be positive");
  }
  if (c.hosts.circuit.probe_initial.count() <= 0) {
    return Status::InvalidArgument("--circuit-probe-first must be positive");
  }
  if (c.coordinator.retry_interval.count() <= 0 || c.retry.max_interval.count() <= 0 ||
      c.coordinator.request_timeout.count() <= 0 || c.api.io_timeout.count() <= 0 ||
      c.api.keep_alive_timeout.count() <= 0 || c.api.request_timeout.count() <= 0) {
    return Status::InvalidArgument(
        "--retry-interval, --retry-max, --branch-timeout, --io-timeout, --keep-alive-timeout "
        "and --request-timeout must be positive");
  }
  if (c.coordinator.max_branch_timeout.count() > 0 &&
      c.coordinator.request_timeout > c.coordinator.max_branch_timeout) {
    return Status::InvalidArgument("--branch-timeout: at most --max-branch-timeout (" +
                                   FormatDuration(c.coordinator.max_branch_timeout) + ")");
  }
  return Status::Ok();
}

// The options as a --config file: every option with its value and its help as a comment.
// Options without a value (an empty string) are written commented out, since an empty value
// would not load back (an empty token, a file named ""); --config, --version and
// --dump-config themselves are left out.
std::string DumpConfig(const CLI::App& app) {
  std::istringstream lines(app.config_to_str(/*default_also=*/true, /*write_description=*/true));
  std::string out = "# settled --config file, written by settled --dump-config\n";
  std::string comments;  // the help of the next option
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line.front() == '#') {
      comments += line + "\n";
      continue;
    }
    const std::string name = line.substr(0, line.find('='));
    if (name == "config" || name == "version" || name == "dump-config") {
      // Its own help goes with it (the lines after the last blank one); what came before it
      // (settled's description, a group's heading) stays for the next option.
      const std::size_t own = comments.rfind("\n\n");
      comments.erase(own == std::string::npos ? 0 : own + 1);
      continue;
    }
    const bool unset = line.size() > name.size() + 1 && line.substr(name.size() + 1) == "\"\"";
    out += comments + (unset ? "# " : "") + line + "\n";
    comments.clear();
  }
  return out;
}

}  // namespace

CommandLine ParseCommandLine(int argc, const char* const* argv, const BuildInfo& build) {
  CommandLine result;
  ServerConfig& c = result.config;
  c.build = build;
  CLI::App app{
      "settled: the Settle transaction coordinator: TCC, saga, transactional messages (msg) and "
      "XA, over HTTP and gRPC, durable on SQLite or PostgreSQL.\n"
      "Speaks DTM's HTTP protocol under /api/settle and /api/dtmsvr, and DTM's gRPC API "
      "(dtmgimp.Dtm) on --grpc-port.",
      "settled"};
  ParsedText text;
  text.durations = DurationFlags(c);
  // A group per concern: --help lists the groups in the order their first option is added,
  // each option under its group's heading.
  AddListeningOptions(app, c, text);
  AddStorageOptions(app, c, text);
  AddClientsAndTokensOptions(app, c, text);
  AddTlsOptions(app, c, text);
  AddSigningOptions(app, c, text);
  AddBranchCallsOptions(app, c, text);
  AddLimitsOptions(app, c, text);
  AddGrpcLimitsOptions(app, c, text);
  AddRunningOptions(app, c, text);
  AddClusterOptions(app, c, text);
  AddAlertsOptions(app, c, text);
  AddLogsOptions(app, c, text);
  AddTracingOptions(app, c, text);
  app.option_defaults()->group("Options");  // CLI11's own group, where --help is
  app.set_version_flag("--version", VersionLine("settled", build),
                       "Print the version, the commit and the build, and exit");
  app.set_config("--config", "",
                 "TOML file of options, keyed by their long names without the dashes "
                 "(port = 8080, retry-interval = \"2s\"); the command line overrides it")
      ->check(CLI::ExistingFile);
  app.allow_config_extras(CLI::config_extras_mode::error);
  bool dump_config = false;
  app.add_flag("--dump-config", dump_config,
               "Print the configuration these options give, as a commented TOML file for "
               "--config, and exit");

  std::ostringstream out;
  std::ostringstream err;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ConfigError& e) {
    // CLI11 says "INI was not able to parse <key>" for a key that names no option.
    constexpr std::string_view kUnknown = "INI was not able to parse ";
    const std::string what = e.what();
    result.exit_now = true;
    result.exit_code = 2;
    result.output = what.rfind(kUnknown, 0) == 0
                        ? "--config: " + what.substr(kUnknown.size()) +
                              " is not an option of settled (keys are the long option names "
                              "without their dashes, as settled --dump-config writes them)\n"
                        : "--config: " + what + "\n";
    return result;
  } catch (const CLI::ParseError& e) {
    result.exit_now = true;
    // --help and --version exit 0; every refused argument exits 2.
    result.exit_code = app.exit(e, out, err) == 0 ? 0 : 2;
    result.output = out.str() + err.str();
    return result;
  }
  c.max_connections_given = app.count("--max-connections") > 0;
  c.max_connections_per_peer_given = app.count("--max-connections-per-peer") > 0;
  c.grpc_max_connections_given = app.count("--grpc-max-connections") > 0;
  if (Status s = ApplyParsedText(text, c); !s.ok()) {
    result.exit_now = true;
    result.exit_code = 2;
    result.output = s.message() + "\n";
    return result;
  }
  if (dump_config) {
    result.exit_now = true;
    result.exit_code = 0;
    result.output = DumpConfig(app);
  }
  return result;
}

}  // namespace settle::app
