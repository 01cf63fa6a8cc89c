#pragma once

// settled's options, a group of --help each (command_line.cc parses them in this order): each
// group's options added to the parser, and what is checked of a group's values once they are
// parsed. A file each, named after its group (listening_options.cc, ..., tracing_options.cc).
#include <string>
#include <vector>

#include "settle/api/access_tokens.h"
#include "settle/app/server_config.h"
#include "settle/core/clock.h"
#include "settle/core/status.h"

namespace CLI {
class App;
}  // namespace CLI

namespace settle::app {

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

// A duration flag: read as text ("500ms", "3s") and parsed once the parser is done.
struct DurationFlag {
  const char* name;
  const char* group;  // of --help (CLI11's option group)
  const char* help;
  Duration* target;
  std::string text;
};

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
  std::string otlp_headers_file;
};

// Every duration flag, with where its value goes in `c` (duration_options.cc).
std::vector<DurationFlag> DurationFlags(ServerConfig& c);
// The duration flags of `group`.
void AddDurationOptions(CLI::App& app, std::vector<DurationFlag>& durations, const char* group);

// Where settled listens: the HTTP API and DTM's gRPC API.
void AddListeningOptions(CLI::App& app, ServerConfig& c, ParsedText& text);

// Where transactions are kept, and for how long.
void AddStorageOptions(CLI::App& app, ServerConfig& c, ParsedText& text);

// Who may call the API: bearer tokens and client certificates (docs/operations.md,
// "Authentication" and "Client certificates").
void AddClientsAndTokensOptions(CLI::App& app, ServerConfig& c, ParsedText& text);
// The tokens of --read-token, --client-token, --admin-token and --token-file `file`.
Status CollectTokens(api::AccessTokens& tokens, const std::vector<std::string>& read,
                     const std::vector<std::string>& client, const std::vector<std::string>& admin,
                     const std::string& file);
// The client certificate and TLS flags that go with others, and the subject map.
Status ApplyClientCertificates(const ParsedText& text, ServerConfig& c);

// settled's own certificate, and those it verifies and presents on its calls.
void AddTlsOptions(CLI::App& app, ServerConfig& c, ParsedText& text);

// Signed calls to participants (docs/protocol.md §4.9).
void AddSigningOptions(CLI::App& app, ServerConfig& c, ParsedText& text);

// How branches are called and retried, and the gates of participant hosts.
void AddBranchCallsOptions(CLI::App& app, ServerConfig& c, ParsedText& text);

// What a client, hostile or not, may make settled hold or do (docs/operations.md, "Hostile
// clients"), and the quotas of a client-level caller under authentication ("Quotas").
void AddLimitsOptions(CLI::App& app, ServerConfig& c, ParsedText& text);

// The bounds of the gRPC API's clients (grpc_api::GrpcServerOptions).
void AddGrpcLimitsOptions(CLI::App& app, ServerConfig& c, ParsedText& text);

// Threads, passes and background work, and the shutdown.
void AddRunningOptions(CLI::App& app, ServerConfig& c, ParsedText& text);

// Instances sharing a postgresql:// store (docs/scaling.md).
void AddClusterOptions(CLI::App& app, ServerConfig& c, ParsedText& text);

// The alert webhook.
void AddAlertsOptions(CLI::App& app, ServerConfig& c, ParsedText& text);

// settled's log lines.
void AddLogsOptions(CLI::App& app, ServerConfig& c, ParsedText& text);

// OpenTelemetry's export, with the environment variables its SDKs read as the defaults.
void AddTracingOptions(CLI::App& app, ServerConfig& c, ParsedText& text);
// The OTLP endpoint and headers, checked so that a wrong one stops settled at start.
Status ApplyTracing(const ParsedText& text, ServerConfig& c);
// --dump-config's line for --otlp-header: its headers' names, their values redacted, commented
// out (a file read back must not send "<redacted>" as a key).
std::string RedactedOtlpHeaderLine(const ParsedText& text);

}  // namespace settle::app
