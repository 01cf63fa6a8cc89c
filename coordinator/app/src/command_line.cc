#include "settle/app/command_line.h"

#include <CLI/CLI.hpp>

#include <sstream>
#include <string>
#include <string_view>

#include "option_groups.h"
#include "settle/core/duration_text.h"
#include "settle/core/url.h"
#include "settle/net/server.h"
#include "settle/signing/keys.h"

namespace settle::app {
namespace {

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

// The tokens an option named `name` (as a config file names it) holds; nullptr for an option
// that holds none.
const std::vector<std::string>* TokensOf(const ParsedText& text, const std::string& name) {
  if (name == "read-token") return &text.read_tokens;
  if (name == "client-token") return &text.client_tokens;
  if (name == "admin-token") return &text.admin_tokens;
  return nullptr;
}

// Commented out: "<redacted>" would not load back as a token (16 characters at least).
std::string RedactedTokensLine(const std::string& name, std::size_t count) {
  std::string values;
  for (std::size_t i = 0; i < count; ++i) values += i == 0 ? "\"<redacted>\"" : ", \"<redacted>\"";
  return "# " + name + "=[" + values +
         "]  # tokens redacted: put them in a --token-file, which is not shown";
}

// The options as a --config file: every option with its value and its help as a comment.
// Options without a value (an empty string) are written commented out, since an empty value
// would not load back (an empty token, a file named ""); --config, --version and
// --dump-config themselves are left out. --otlp-header's values (a collector's API key) are
// redacted: its line names the headers only, commented out; so are the tokens given as
// --read-token, --client-token and --admin-token (their lines say how many).
std::string DumpConfig(const CLI::App& app, const ParsedText& text) {
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
    if (name == "otlp-header" && !unset) {
      out += comments + RedactedOtlpHeaderLine(text) + "\n";
      comments.clear();
      continue;
    }
    if (const std::vector<std::string>* tokens = TokensOf(text, name); tokens && !unset) {
      out += comments + RedactedTokensLine(name, tokens->size()) + "\n";
      comments.clear();
      continue;
    }
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
    result.output = DumpConfig(app, text);
  }
  return result;
}

}  // namespace settle::app
