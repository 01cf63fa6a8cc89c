#include "settle/app/command_line.h"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "temp_dir.h"
#include "test_ca.h"

namespace settle::app {
namespace {

CommandLine Parse(std::vector<const char*> args) {
  args.insert(args.begin(), "settled");
  return ParseCommandLine(static_cast<int>(args.size()), args.data());
}

TEST_CASE("settled's defaults match the protocol", "[cli]") {
  const CommandLine cl = Parse({});
  REQUIRE_FALSE(cl.exit_now);
  CHECK(cl.config.host == "127.0.0.1");
  CHECK(cl.config.port == 36789);
  CHECK(cl.config.db_path == "./data/settle.db");
  CHECK(cl.config.coordinator.retry_interval == std::chrono::seconds(1));
  CHECK(cl.config.retry.max_interval == std::chrono::seconds(60));
  CHECK(cl.config.retry.stuck_after == 10);
  CHECK(cl.config.coordinator.request_timeout == std::chrono::seconds(3));
  CHECK(cl.config.coordinator.prepared_timeout_to_fail == std::chrono::seconds(35));
  CHECK(cl.config.log_level == "info");
  CHECK(cl.config.hosts.circuit.failures == 5);
  CHECK(cl.config.hosts.circuit.probe_max == std::chrono::seconds(30));
  CHECK(cl.config.hosts.max_in_flight == 128);
  CHECK(cl.config.hosts.release_per_second == 500);
}

TEST_CASE(
    "the host clock's distance from the database's is bounded by --max-clock-skew, and 0 turns it "
    "off",
    "[cli][clock]") {
  CHECK(Parse({}).config.clock_skew.max == std::chrono::seconds(5));
  const CommandLine cl = Parse({"--max-clock-skew", "2s"});
  REQUIRE_FALSE(cl.exit_now);
  CHECK(cl.config.clock_skew.max == std::chrono::seconds(2));
  CHECK(Parse({"--max-clock-skew", "0"}).config.clock_skew.max == Duration(0));
  const CommandLine bad = Parse({"--max-clock-skew", "soon"});
  CHECK(bad.exit_now);
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.output, Catch::Contains("--max-clock-skew"));
  CHECK_THAT(Parse({"--help"}).output, Catch::Contains("--max-clock-skew"));
}

TEST_CASE(
    "the gRPC API's clients are bounded by --grpc-max-connections, "
    "--grpc-max-connections-per-peer, --grpc-first-message-timeout and --grpc-memory-limit",
    "[cli]") {
  const CommandLine defaults = Parse({});
  CHECK(defaults.config.grpc.max_connections == 1000);
  CHECK(defaults.config.grpc.max_connections_per_peer == 100);
  CHECK(defaults.config.grpc.first_message_timeout == std::chrono::seconds(10));
  CHECK(defaults.config.grpc.memory_limit_bytes == std::size_t{256} << 20);
  const CommandLine cl =
      Parse({"--grpc-max-connections", "50", "--grpc-max-connections-per-peer", "0",
             "--grpc-first-message-timeout", "1500ms", "--grpc-memory-limit", "16777216"});
  REQUIRE_FALSE(cl.exit_now);
  CHECK(cl.config.grpc.max_connections == 50);
  CHECK(cl.config.grpc.max_connections_per_peer == 0);
  CHECK(cl.config.grpc.first_message_timeout == Duration(1500));
  CHECK(cl.config.grpc.memory_limit_bytes == std::size_t{16} << 20);
  for (std::vector<const char*> bad : std::vector<std::vector<const char*>>{
           {"--grpc-max-connections", "0"},
           {"--grpc-max-connections", "10", "--grpc-max-connections-per-peer", "11"},
           {"--grpc-first-message-timeout", "0"},
           {"--grpc-first-message-timeout", "soon"},
           {"--grpc-memory-limit", "1000"}}) {
    const CommandLine refused = Parse(bad);
    INFO(bad[0] << " " << bad[1]);
    CHECK(refused.exit_now);
    CHECK(refused.exit_code == 2);
    CHECK_THAT(refused.output, Catch::Contains(bad.size() == 4 ? bad[2] : bad[0]));
  }
  const CommandLine help = Parse({"--help"});
  for (const char* flag : {"--grpc-max-connections", "--grpc-max-connections-per-peer",
                           "--grpc-first-message-timeout", "--grpc-memory-limit"}) {
    CHECK_THAT(help.output, Catch::Contains(flag));
  }
}

TEST_CASE("circuits per participant host are set by --circuit-failures and --circuit-probe-max",
          "[cli]") {
  const CommandLine cl = Parse({"--circuit-failures", "3", "--circuit-probe-max", "2m"});
  REQUIRE_FALSE(cl.exit_now);
  CHECK(cl.config.hosts.circuit.failures == 3);
  CHECK(cl.config.hosts.circuit.probe_max == std::chrono::minutes(2));
  const CommandLine off = Parse({"--circuit-failures", "0"});
  REQUIRE_FALSE(off.exit_now);
  CHECK(off.config.hosts.circuit.failures == 0);
  const CommandLine help = Parse({"--help"});
  CHECK_THAT(help.output, Catch::Contains("--circuit-failures"));
  CHECK_THAT(help.output, Catch::Contains("--circuit-probe-max"));
}

TEST_CASE("the first wait of an open circuit before its probe is set by --circuit-probe-first",
          "[cli]") {
  CHECK(Parse({}).config.hosts.circuit.probe_initial == std::chrono::seconds(1));
  const CommandLine cl = Parse({"--circuit-probe-first", "60s", "--circuit-probe-max", "2m"});
  REQUIRE_FALSE(cl.exit_now);
  CHECK(cl.config.hosts.circuit.probe_initial == std::chrono::seconds(60));
  const CommandLine zero = Parse({"--circuit-probe-first", "0s"});
  CHECK(zero.exit_now);
  CHECK(zero.exit_code != 0);
  CHECK_THAT(zero.output, Catch::Contains("--circuit-probe-first"));
  CHECK_THAT(Parse({"--help"}).output, Catch::Contains("--circuit-probe-first"));
}

TEST_CASE(
    "the cap on calls in flight per host and the pace of releases after an outage are set by "
    "--host-max-in-flight and --circuit-release-rate",
    "[cli]") {
  const CommandLine cl = Parse({"--host-max-in-flight", "16", "--circuit-release-rate", "50"});
  REQUIRE_FALSE(cl.exit_now);
  CHECK(cl.config.hosts.max_in_flight == 16);
  CHECK(cl.config.hosts.release_per_second == 50);
  const CommandLine off = Parse({"--host-max-in-flight", "0", "--circuit-release-rate", "0"});
  REQUIRE_FALSE(off.exit_now);
  CHECK(off.config.hosts.max_in_flight == 0);
  CHECK(off.config.hosts.release_per_second == 0);
  for (const char* bad : {"-1", "x", "1.5"}) {
    INFO(bad);
    const CommandLine refused = Parse({"--host-max-in-flight", bad});
    CHECK(refused.exit_now);
    CHECK(refused.exit_code == 2);
    CHECK_THAT(refused.output, Catch::Contains("--host-max-in-flight"));
  }
}

TEST_CASE("settled --signing-key loads a key to sign its calls with, and refuses one it cannot use",
          "[cli][signing]") {
  testing::TempDir dir;
  const std::string pem = dir.File("signing.pem");
  REQUIRE(std::system(("openssl genpkey -algorithm ed25519 -out " + pem).c_str()) == 0);
  const CommandLine cl = Parse({"--signing-key", pem.c_str(), "--unsigned-authority"});
  INFO(cl.output);
  REQUIRE(cl.exit_code == 0);
  REQUIRE(cl.config.signing_key);
  CHECK(cl.config.signing_key->keyid().rfind("ed25519-", 0) == 0);
  CHECK(cl.config.unsigned_authority);
  CHECK_FALSE(Parse({}).config.signing_key);  // off by default

  const std::string bad = dir.File("bad.key");
  std::ofstream(bad) << "not a key\n";
  const CommandLine refused = Parse({"--signing-key", bad.c_str()});
  CHECK(refused.exit_code == 2);
  CHECK_THAT(refused.output,
             Catch::StartsWith("--signing-key: " + bad +
                               ": the file is neither a PEM key nor a shared secret declared "
                               "with hmac:; expected an Ed25519 private key in PEM"));
  CHECK_THAT(refused.output, !Catch::Contains("not a key"));  // a secret's text is never echoed
  // A secret as it had to be written before secrets were declared: bare base64.
  std::ofstream(bad) << "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\n";
  const CommandLine bare = Parse({"--signing-key", bad.c_str()});
  CHECK(bare.exit_code == 2);
  CHECK_THAT(bare.output,
             Catch::StartsWith("--signing-key: " + bad + ": the file holds bare base64"));
  CHECK_THAT(bare.output, !Catch::Contains("AAECAwQFBgcICQoLDA0O"));
  std::ofstream(bad) << "hmac:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\n";
  const CommandLine hmac = Parse({"--signing-key", bad.c_str()});
  REQUIRE(hmac.exit_code == 0);
  REQUIRE(hmac.config.signing_key);
  CHECK(hmac.config.signing_key->algorithm() == signing::Algorithm::kHmacSha256);
  CHECK(hmac.config.signing_key_file == bad);
  const CommandLine alone = Parse({"--unsigned-authority"});
  CHECK(alone.exit_code == 2);
  CHECK_THAT(alone.output, Catch::Contains("--unsigned-authority goes with --signing-key"));
}

TEST_CASE("every setting can be given on the command line", "[cli]") {
  const CommandLine cl =
      Parse({"--host",           "0.0.0.0", "--port",           "0",  "--db",          "/tmp/x.db",
             "--retry-interval", "250ms",   "--retry-max",      "2m", "--stuck-after", "4",
             "--pause-after",    "6",       "--branch-timeout", "5s", "--tcc-timeout", "1m",
             "--io-threads",     "3",       "--max-passes",     "16", "--log-level",   "debug",
             "--shutdown-grace", "3s",      "--strict-requests"});
  REQUIRE_FALSE(cl.exit_now);
  CHECK(cl.config.coordinator.strict_requests);
  CHECK_FALSE(Parse({}).config.coordinator.strict_requests);
  CHECK(cl.config.host == "0.0.0.0");
  CHECK(cl.config.port == 0);
  CHECK(cl.config.db_path == "/tmp/x.db");
  CHECK(cl.config.coordinator.retry_interval == std::chrono::milliseconds(250));
  CHECK(cl.config.retry.max_interval == std::chrono::minutes(2));
  CHECK(cl.config.retry.stuck_after == 4);
  CHECK(cl.config.retry.pause_after == 6);
  CHECK(Parse({}).config.retry.pause_after == 0);
  CHECK(cl.config.coordinator.request_timeout == std::chrono::seconds(5));
  CHECK(cl.config.coordinator.prepared_timeout_to_fail == std::chrono::minutes(1));
  CHECK(cl.config.io_threads == 3);
  CHECK(cl.config.max_passes == 16);
  CHECK(cl.config.log_level == "debug");
  CHECK(cl.config.shutdown_grace == std::chrono::seconds(3));
}

TEST_CASE("settled --help explains every option and exits 0", "[cli]") {
  const CommandLine cl = Parse({"--help"});
  CHECK(cl.exit_now);
  CHECK(cl.exit_code == 0);
  for (const char* option : {"--host", "--port", "--db", "--retry-interval", "--retry-max",
                             "--stuck-after", "--branch-timeout", "--tcc-timeout", "--log-level",
                             "--tls-client-ca", "--require-client-cert", "--client-certificates",
                             "--tls-client-cert", "--tls-client-key"}) {
    CHECK_THAT(cl.output, Catch::Contains(option));
  }
}

TEST_CASE("settled --help names what settled serves and groups its options by concern", "[cli]") {
  const std::string help = Parse({"--help"}).output;
  CHECK_THAT(help, Catch::StartsWith("settled: the Settle transaction coordinator: TCC, saga, "
                                     "transactional messages (msg) and XA, over HTTP and gRPC"));
  CHECK_THAT(help, Catch::Contains("DTM's gRPC API (dtmgimp.Dtm) on --grpc-port"));
  // Each group's heading, in this order, with one of its options under it.
  const std::vector<std::pair<std::string, std::string>> groups = {
      {"Listening", "--grpc-port"},
      {"Storage", "--retention"},
      {"Clients and tokens", "--client-certificates"},
      {"TLS", "--tls-cert"},
      {"Signing", "--signing-key"},
      {"Branch calls", "--retry-interval"},
      {"Limits", "--rate-limit"},
      {"gRPC limits", "--grpc-memory-limit"},
      {"Running", "--io-threads"},
      {"Several settled on one PostgreSQL", "--lease"},
      {"Alerts", "--alert-webhook"},
      {"Logs", "--log-format"},
      {"Tracing", "--otlp-endpoint"}};
  std::size_t at = 0;
  for (const auto& [group, option] : groups) {
    CAPTURE(group, option);
    const std::size_t heading = help.find("\n" + group + ":\n", at);
    REQUIRE(heading != std::string::npos);
    const std::size_t end = help.find("\n\n", heading + 1);  // a blank line ends a group
    CHECK(help.find("  " + option + " ", heading) < end);
    at = heading + 1;
  }
  // --help, --version, --config and --dump-config stay in CLI11's own group, first.
  CHECK(help.find("--dump-config") < help.find("\nListening:\n"));
}

TEST_CASE("bad arguments are refused with a message and exit code 2", "[cli]") {
  for (auto args : std::vector<std::vector<const char*>>{{"--port", "70000"},
                                                         {"--retry-interval", "soon"},
                                                         {"--retry-interval", "0s"},
                                                         {"--log-level", "loud"},
                                                         {"--stuck-after", "0"},
                                                         {"--pause-after", "-1"},
                                                         {"--tls-cert", "/no/such/cert.pem"},
                                                         {"--max-passes", "0"},
                                                         {"--circuit-failures", "-1"},
                                                         {"--circuit-probe-max", "0"},
                                                         {"--circuit-probe-max", "never"},
                                                         {"--bogus"}}) {
    const CommandLine cl = Parse(args);
    INFO(args[0]);
    CHECK(cl.exit_now);
    CHECK(cl.exit_code == 2);
    CHECK_FALSE(cl.output.empty());
  }
}

TEST_CASE("operability settings: retention, webhook, limits, all off or generous by default",
          "[cli]") {
  const CommandLine defaults = Parse({});
  CHECK(defaults.config.retention.keep == Duration(0));
  CHECK(defaults.config.alert_webhook.empty());
  CHECK_FALSE(defaults.config.api.tokens.enabled());

  const CommandLine cl = Parse(
      {"--retention", "7d", "--alert-webhook", "http://127.0.0.1:9000/alert", "--max-body-bytes",
       "65536", "--max-connections", "500", "--io-timeout", "2s", "--keep-alive-timeout", "30s"});
  REQUIRE_FALSE(cl.exit_now);
  CHECK(cl.config.retention.keep == std::chrono::hours(24 * 7));
  CHECK(cl.config.alert_webhook == "http://127.0.0.1:9000/alert");
  CHECK(cl.config.api.max_body_bytes == 65536);
  CHECK(cl.config.api.max_connections == 500);
  CHECK(cl.config.api.io_timeout == std::chrono::seconds(2));
  CHECK(cl.config.api.keep_alive_timeout == std::chrono::seconds(30));
  CHECK(Parse({"--io-timeout", "0"}).exit_code == 2);
}

TEST_CASE(
    "settled --max-branch-timeout caps a transaction's request_timeout, and --branch-timeout "
    "must fit in it",
    "[cli][bounds]") {
  CHECK(Parse({}).config.coordinator.max_branch_timeout == std::chrono::minutes(5));
  const CommandLine cl = Parse({"--max-branch-timeout", "30s", "--branch-timeout", "30s"});
  REQUIRE_FALSE(cl.exit_now);
  CHECK(cl.config.coordinator.max_branch_timeout == std::chrono::seconds(30));
  CHECK(Parse({"--max-branch-timeout", "0"}).config.coordinator.max_branch_timeout == Duration(0));
  CHECK(Parse({"--max-branch-timeout", "0", "--branch-timeout", "1h"}).exit_code == 0);
  const CommandLine over = Parse({"--max-branch-timeout", "10s", "--branch-timeout", "11s"});
  CHECK(over.exit_code == 2);
  CHECK_THAT(over.output, Catch::Contains("--branch-timeout: at most --max-branch-timeout (10s)"));
  const CommandLine bad = Parse({"--max-branch-timeout", "forever"});
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.output, Catch::Contains("--max-branch-timeout"));
  CHECK_THAT(Parse({"--help"}).output, Catch::Contains("--max-branch-timeout"));
}

TEST_CASE("TLS: a certificate and its key serve the API over HTTPS, a CA file verifies peers",
          "[cli][tls]") {
  testing::TempDir dir;
  testing::TestCa ca(dir.path());
  const testing::TestCa::Issued server = ca.IssueForLocalhost();
  const CommandLine cl =
      Parse({"--tls-cert", server.cert_file.c_str(), "--tls-key", server.key_file.c_str(),
             "--ca-file", ca.ca_file().c_str(), "--alert-webhook", "https://hooks.example/settle"});
  INFO(cl.output);
  REQUIRE_FALSE(cl.exit_now);
  CHECK(cl.config.api.tls.cert_file == server.cert_file);
  CHECK(cl.config.api.tls.key_file == server.key_file);
  CHECK(cl.config.ca_file == ca.ca_file());
  CHECK(cl.config.alert_webhook == "https://hooks.example/settle");

  const CommandLine half = Parse({"--tls-cert", server.cert_file.c_str()});
  CHECK(half.exit_code == 2);
  CHECK_THAT(half.output, Catch::Contains("--tls-cert and --tls-key"));
}

TEST_CASE(
    "a certificate, key or webhook settled cannot use stops it at the command line, with exit "
    "code 2 and the flag named, before anything is opened",
    "[cli][tls][start]") {
  testing::TempDir dir;
  testing::TestCa ca(dir.path());
  const testing::TestCa::Issued server = ca.IssueForLocalhost();
  const testing::TestCa::Issued other = ca.IssueClient("other", "/CN=other");
  std::ofstream(dir.File("garbage.pem")) << "x";
  const std::string cert = server.cert_file, key = server.key_file, other_key = other.key_file,
                    garbage = dir.File("garbage.pem");
  struct Case {
    std::vector<const char*> args;
    const char* says;
  };
  for (const Case& c : std::vector<Case>{
           {{"--tls-cert", cert.c_str(), "--tls-key", other_key.c_str()},
            "does not match certificate"},
           {{"--tls-cert", garbage.c_str(), "--tls-key", key.c_str()}, "TLS certificate"},
           {{"--tls-cert", cert.c_str(), "--tls-key", garbage.c_str()}, "TLS key"},
           {{"--tls-cert", cert.c_str(), "--tls-key", key.c_str(), "--tls-client-ca",
             garbage.c_str()},
            "client CA file"},
           {{"--alert-webhook", "hooks.example/settle"}, "--alert-webhook"},
           {{"--port", "7000", "--grpc-port", "7000"}, "--grpc-port: 7000 is --port"}}) {
    const CommandLine cl = Parse(c.args);
    INFO(c.args[0] << " " << c.args[1] << " " << c.args.size());
    CHECK(cl.exit_now);
    CHECK(cl.exit_code == 2);
    CHECK_THAT(cl.output, Catch::Contains(c.says));
    if (std::string(c.args[0]) == "--tls-cert") {
      CHECK_THAT(cl.output, Catch::StartsWith("--tls-cert/--tls-key"));
    }
  }
}

TEST_CASE(
    "mutual TLS: --tls-client-ca asks for client certificates, --client-certificates maps "
    "their subjects, --tls-client-cert is presented on https:// calls",
    "[cli][tls][mtls]") {
  testing::TempDir dir;
  testing::TestCa ca(dir.path());
  const testing::TestCa::Issued server = ca.IssueForLocalhost();
  const testing::TestCa::Issued settled = ca.IssueClient("settled", "/O=Shop/CN=settled");
  // Subjects as openssl prints them: -nameopt RFC2253, its default form, the old slash form.
  std::ofstream(dir.File("subjects")) << "client CN=order-service,O=Shop\n"
                                         "read CN=dashboard,O=Shop  # grafana\n"
                                         "admin subject=C = DE, O = Shop, CN = ops  # on-call\n"
                                         "read /O=Shop/OU=BI/CN=reports\n";
  const CommandLine cl =
      Parse({"--tls-cert", server.cert_file.c_str(), "--tls-key", server.key_file.c_str(),
             "--tls-client-ca", ca.ca_file().c_str(), "--require-client-cert",
             "--client-certificates", dir.File("subjects").c_str(), "--tls-client-cert",
             settled.cert_file.c_str(), "--tls-client-key", settled.key_file.c_str()});
  INFO(cl.output);
  REQUIRE_FALSE(cl.exit_now);
  CHECK(cl.config.api.tls.client_ca_file == ca.ca_file());
  CHECK(cl.config.api.tls.require_client_certificate);
  CHECK(cl.config.api.client_certificates.size() == 4);
  CHECK(cl.config.api.client_certificates.Identify("CN=dashboard,O=Shop")->name == "grafana");
  CHECK(cl.config.api.client_certificates.Identify("CN=ops,O=Shop,C=DE")->name == "on-call");
  CHECK(cl.config.api.client_certificates.Identify("CN=reports,OU=BI,O=Shop")->name == "reports");
  CHECK(cl.config.tls_client_cert == settled.cert_file);
  CHECK(cl.config.tls_client_key == settled.key_file);

  const CommandLine defaults = Parse({});
  CHECK(defaults.config.api.tls.client_ca_file.empty());
  CHECK_FALSE(defaults.config.api.tls.require_client_certificate);
  CHECK_FALSE(defaults.config.api.client_certificates.enabled());
  CHECK(defaults.config.tls_client_cert.empty());
}

TEST_CASE(
    "mutual TLS flags without the flags they need, or with files that cannot be used, stop "
    "settled with exit code 2, naming the flag",
    "[cli][tls][mtls]") {
  testing::TempDir dir;
  testing::TestCa ca(dir.path());
  const testing::TestCa::Issued server = ca.IssueForLocalhost();
  const testing::TestCa::Issued a = ca.IssueClient("a", "/CN=a");
  const testing::TestCa::Issued b = ca.IssueClient("b", "/CN=b");
  std::ofstream(dir.File("subjects")) << "client CN=a\n";
  std::ofstream(dir.File("bad-subjects")) << "client CN=a\nowner CN=b\n";
  // A subject no certificate can have: refused at start, not found out at the first request.
  std::ofstream(dir.File("never-subjects")) << "client CN=a\nadmin CN=b,company=Shop\n";
  const std::string cert = server.cert_file, key = server.key_file, client_ca = ca.ca_file(),
                    subjects = dir.File("subjects"), bad_subjects = dir.File("bad-subjects"),
                    never_subjects = dir.File("never-subjects");
  struct Case {
    std::vector<const char*> args;
    const char* says;
  };
  for (const Case& c : std::vector<Case>{
           {{"--tls-client-ca", client_ca.c_str()}, "--tls-client-ca needs --tls-cert"},
           {{"--tls-cert", cert.c_str(), "--tls-key", key.c_str(), "--require-client-cert"},
            "--require-client-cert needs --tls-client-ca"},
           {{"--tls-cert", cert.c_str(), "--tls-key", key.c_str(), "--client-certificates",
             subjects.c_str()},
            "--client-certificates needs --tls-client-ca"},
           {{"--tls-cert", cert.c_str(), "--tls-key", key.c_str(), "--tls-client-ca",
             client_ca.c_str(), "--client-certificates", bad_subjects.c_str()},
            "line 2"},
           {{"--tls-cert", cert.c_str(), "--tls-key", key.c_str(), "--tls-client-ca",
             client_ca.c_str(), "--client-certificates", never_subjects.c_str()},
            "line 2: client certificate: 'CN=b,company=Shop' is not a subject"},
           {{"--client-certificates", "/no/such/subjects"}, "--client-certificates"},
           {{"--tls-client-ca", "/no/such/ca.pem"}, "--tls-client-ca"},
           {{"--tls-client-cert", a.cert_file.c_str()}, "--tls-client-cert and --tls-client-key"},
           {{"--tls-client-cert", a.cert_file.c_str(), "--tls-client-key", b.key_file.c_str()},
            "--tls-client-cert/--tls-client-key"},
           {{"--tls-client-cert", key.c_str(), "--tls-client-key", key.c_str()},
            "--tls-client-cert/--tls-client-key"}}) {
    const CommandLine cl = Parse(c.args);
    INFO(c.args[0] << " " << c.args.size());
    CHECK(cl.exit_now);
    CHECK(cl.exit_code == 2);
    CHECK_THAT(cl.output, Catch::Contains(c.says));
  }
  const CommandLine bad_map =
      Parse({"--tls-cert", cert.c_str(), "--tls-key", key.c_str(), "--tls-client-ca",
             client_ca.c_str(), "--client-certificates", bad_subjects.c_str()});
  CHECK_THAT(bad_map.output,
             Catch::Contains("--client-certificates") && Catch::Contains(bad_subjects));
}

TEST_CASE("tokens come from flags, the environment or a token file", "[cli][auth]") {
  testing::TempDir dir;
  const std::string file = dir.File("tokens");
  std::ofstream(file) << "# rotated monthly\nclient client-from-file-0123456789\n";
  ::setenv("SETTLE_READ_TOKEN", "read-from-env-0123456789", 1);
  const CommandLine cl =
      Parse({"--admin-token", "admin-from-flag-0123456789", "--token-file", file.c_str()});
  ::unsetenv("SETTLE_READ_TOKEN");
  REQUIRE_FALSE(cl.exit_now);

  const api::AccessTokens& tokens = cl.config.api.tokens;
  const std::string admin = "Bearer admin-from-flag-0123456789";
  const std::string client = "Bearer client-from-file-0123456789";
  const std::string read = "Bearer read-from-env-0123456789";
  CHECK(tokens.Grant(&admin) == api::Access::kAdmin);
  CHECK(tokens.Grant(&client) == api::Access::kClient);
  CHECK(tokens.Grant(&read) == api::Access::kRead);
}

TEST_CASE("a bad token or token file stops settled with exit code 2, naming the flag",
          "[cli][auth]") {
  const CommandLine short_token = Parse({"--client-token", "short"});
  CHECK(short_token.exit_now);
  CHECK(short_token.exit_code == 2);
  CHECK_THAT(short_token.output, Catch::Contains("--client-token") && Catch::Contains("16"));

  testing::TempDir dir;
  const std::string file = dir.File("tokens");
  std::ofstream(file) << "superuser 0123456789abcdef0123\n";
  const CommandLine bad_file = Parse({"--token-file", file.c_str()});
  CHECK(bad_file.exit_code == 2);
  CHECK_THAT(bad_file.output, Catch::Contains("--token-file") && Catch::Contains("line 1"));

  CHECK(Parse({"--token-file", "/nonexistent/tokens"}).exit_code != 0);
  CHECK(Parse({"--retention", "a week"}).exit_code == 2);
}

// --- --config, --dump-config, --version ---

std::string WriteConfig(const testing::TempDir& dir, const std::string& text) {
  const std::string path = dir.File("settled.toml");
  std::ofstream(path) << text;
  return path;
}

TEST_CASE("a --config file sets options by their long names and the command line overrides it",
          "[cli][config]") {
  testing::TempDir dir;
  const std::string path = WriteConfig(dir, R"(# an operator's file
host = "0.0.0.0"
port = 8080
store = "/var/lib/settle/settle.db"
retry-interval = "2s"
max-passes = 64
read-token = ["read-token-0123456789", "read-token-abcdefghij"]
admin-token = "admin-token-0123456789"
log-level = "warn"
)");
  const CommandLine from_file = Parse({"--config", path.c_str()});
  INFO(from_file.output);
  REQUIRE_FALSE(from_file.exit_now);
  CHECK(from_file.config.host == "0.0.0.0");
  CHECK(from_file.config.port == 8080);
  CHECK(from_file.config.db_path == "/var/lib/settle/settle.db");
  CHECK(from_file.config.coordinator.retry_interval == std::chrono::seconds(2));
  CHECK(from_file.config.max_passes == 64);
  CHECK(from_file.config.api.tokens.size() == 3);
  CHECK(from_file.config.log_level == "warn");

  const CommandLine overridden =
      Parse({"--config", path.c_str(), "--port", "9090", "--retry-interval", "500ms"});
  REQUIRE_FALSE(overridden.exit_now);
  CHECK(overridden.config.port == 9090);
  CHECK(overridden.config.coordinator.retry_interval == std::chrono::milliseconds(500));
  CHECK(overridden.config.host == "0.0.0.0");  // what the command line left alone
}

TEST_CASE("settled --dump-config writes a file that --config reads back to the same configuration",
          "[cli][config]") {
  testing::TempDir dir;
  const std::string tokens = dir.File("tokens");
  std::ofstream(tokens) << "client client-token-0123456789\n";
  const CommandLine dumped = Parse(
      {"--dump-config", "--port", "7000", "--retention", "7d", "--token-file", tokens.c_str()});
  REQUIRE(dumped.exit_now);
  CHECK(dumped.exit_code == 0);
  CHECK_THAT(dumped.output, Catch::Contains("port=7000"));
  CHECK_THAT(dumped.output, Catch::Contains("# Port to listen on"));
  // settled's description first, then the options in the groups of --help.
  CHECK_THAT(dumped.output, Catch::Contains("\n# settled: the Settle transaction coordinator"));
  CHECK(dumped.output.find("# Listening Options") < dumped.output.find("port=7000"));
  CHECK(dumped.output.find("# Storage Options") < dumped.output.find("retention=\"7d\""));
  // Options without a value are there to uncomment, not to load as empty values.
  CHECK_THAT(dumped.output, Catch::Contains("# tls-cert=\"\""));
  CHECK_THAT(dumped.output, !Catch::Contains("dump-config="));

  const std::string path = WriteConfig(dir, dumped.output);
  const CommandLine loaded = Parse({"--config", path.c_str()});
  INFO(loaded.output);
  REQUIRE_FALSE(loaded.exit_now);
  CHECK(loaded.config.port == 7000);
  CHECK(loaded.config.retention.keep == std::chrono::hours(7 * 24));
  CHECK(loaded.config.api.tokens.size() == 1);
  const CommandLine again = Parse({"--config", path.c_str(), "--dump-config"});
  CHECK(again.output == dumped.output);
}

TEST_CASE("a bad --config file is refused with exit code 2, naming the key or the file",
          "[cli][config]") {
  testing::TempDir dir;
  struct Case {
    std::string text;
    std::string named;
  };
  for (const Case& c : std::vector<Case>{{"prot = 8080\n", "prot is not an option of settled"},
                                         {"port = 70000\n", "--port"},
                                         {"retry-interval = \"soon\"\n", "--retry-interval"},
                                         {"read-token = \"short\"\n", "--read-token"},
                                         {"tls-cert = \"/no/such/cert.pem\"\n", "--tls-cert"}}) {
    INFO(c.text);
    const std::string path = WriteConfig(dir, c.text);
    const CommandLine cl = Parse({"--config", path.c_str()});
    CHECK(cl.exit_now);
    CHECK(cl.exit_code == 2);
    CHECK_THAT(cl.output, Catch::Contains(c.named));
  }
  const CommandLine missing = Parse({"--config", "/no/such/settled.toml"});
  CHECK(missing.exit_code == 2);
  CHECK_THAT(missing.output, Catch::Contains("/no/such/settled.toml"));
}

TEST_CASE("settled --version prints the version, the commit and the build, and exits 0", "[cli]") {
  const std::vector<const char*> args = {"settled", "--version"};
  const BuildInfo build{"1.2.3", "0123456789ab", "Release", "GCC 12.2.0"};
  const CommandLine cl = ParseCommandLine(static_cast<int>(args.size()), args.data(), build);
  CHECK(cl.exit_now);
  CHECK(cl.exit_code == 0);
  CHECK(cl.output == "settled 1.2.3 (commit 0123456789ab, Release, GCC 12.2.0)\n");
}

TEST_CASE("an OTLP endpoint (--otlp-endpoint) is a base URL: spans go to its /v1/traces",
          "[cli][otlp]") {
  CHECK(Parse({}).config.otlp_traces_url.empty());
  const CommandLine cl = Parse({"--otlp-endpoint", "http://127.0.0.1:4318", "--otlp-header",
                                "api-key=s3cret,x-tenant=7", "--otlp-service-name", "pay"});
  REQUIRE_FALSE(cl.exit_now);
  CHECK(cl.config.otlp_traces_url == "http://127.0.0.1:4318/v1/traces");
  CHECK(cl.config.otlp_headers ==
        std::vector<std::pair<std::string, std::string>>{{"api-key", "s3cret"}, {"x-tenant", "7"}});
  CHECK(cl.config.otlp_service_name == "pay");
}

TEST_CASE("a wrong OTLP endpoint or header stops settled at start, the flag named", "[cli][otlp]") {
  const CommandLine url = Parse({"--otlp-endpoint", "collector:4318"});
  CHECK(url.exit_now);
  CHECK(url.exit_code == 2);
  CHECK(url.output.rfind("--otlp-endpoint 'collector:4318': ", 0) == 0);
  const CommandLine header = Parse({"--otlp-header", "api-key"});
  CHECK(header.exit_code == 2);
  CHECK(header.output.rfind("--otlp-header: entry 1 is not name=value", 0) == 0);
  CHECK(header.output.find("api-key") == std::string::npos);
  const CommandLine smuggled = Parse({"--otlp-header", "x=1%0D%0AHost: evil"});
  CHECK(smuggled.exit_code == 2);
}

TEST_CASE("OpenTelemetry's environment variables are the OTLP options' defaults", "[cli][otlp]") {
  ::setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "https://otel.example/ingest", 1);
  ::setenv("OTEL_EXPORTER_OTLP_HEADERS", "api-key=from-env", 1);
  ::setenv("OTEL_SERVICE_NAME", "env-settled", 1);
  const CommandLine from_env = Parse({});
  const CommandLine from_flag = Parse({"--otlp-endpoint", "http://127.0.0.1:4318"});
  ::unsetenv("OTEL_EXPORTER_OTLP_ENDPOINT");
  ::unsetenv("OTEL_EXPORTER_OTLP_HEADERS");
  ::unsetenv("OTEL_SERVICE_NAME");
  CHECK(from_env.config.otlp_traces_url == "https://otel.example/ingest/v1/traces");
  CHECK(from_env.config.otlp_headers ==
        std::vector<std::pair<std::string, std::string>>{{"api-key", "from-env"}});
  CHECK(from_env.config.otlp_service_name == "env-settled");
  CHECK(from_flag.config.otlp_traces_url == "http://127.0.0.1:4318/v1/traces");
}

using Headers = std::vector<std::pair<std::string, std::string>>;

TEST_CASE(
    "an OTLP headers file (--otlp-headers-file) gives a header a line, values as written, after "
    "--otlp-header's",
    "[cli][otlp]") {
  testing::TempDir dir;
  const std::string file = dir.File("otlp-headers");
  std::ofstream(file) << "# the collector's key\n"
                         "api-key = a b%20c,d\n"
                         "\n"
                         "   # indented comment\n"
                         "x-tenant=7\r\n";
  const CommandLine cl = Parse({"--otlp-endpoint", "http://127.0.0.1:4318", "--otlp-header",
                                "from-flag=1", "--otlp-headers-file", file.c_str()});
  REQUIRE_FALSE(cl.exit_now);
  CHECK(cl.config.otlp_headers ==
        Headers{{"from-flag", "1"}, {"api-key", "a b%20c,d"}, {"x-tenant", "7"}});

  ::setenv("SETTLE_OTLP_HEADERS_FILE", file.c_str(), 1);
  const CommandLine from_env = Parse({});
  ::unsetenv("SETTLE_OTLP_HEADERS_FILE");
  CHECK(from_env.config.otlp_headers == Headers{{"api-key", "a b%20c,d"}, {"x-tenant", "7"}});
}

TEST_CASE(
    "a missing OTLP headers file, or a bad line in it, stops settled at start, naming the file "
    "and the line but never a value",
    "[cli][otlp]") {
  const CommandLine missing = Parse({"--otlp-headers-file", "/nonexistent/otlp-headers"});
  CHECK(missing.exit_now);
  CHECK(missing.exit_code == 2);
  CHECK_THAT(missing.output, Catch::Contains("--otlp-headers-file") &&
                                 Catch::Contains("/nonexistent/otlp-headers"));

  testing::TempDir dir;
  const std::string file = dir.File("otlp-headers");
  std::ofstream(file) << "# keys\n\napi-key=s3cret\nthe-other-s3cret\n";
  const CommandLine bad = Parse({"--otlp-headers-file", file.c_str()});
  CHECK(bad.exit_now);
  CHECK(bad.exit_code == 2);
  CHECK(bad.output == "--otlp-headers-file " + file + ": line 4: expected name=value\n");

  std::ofstream(file) << "Content-Length=0\n";
  const CommandLine framing = Parse({"--otlp-headers-file", file.c_str()});
  CHECK(framing.exit_code == 2);
  CHECK(framing.output ==
        "--otlp-headers-file " + file + ": line 1: Content-Length is set by settled itself\n");

  std::ofstream(file) << "api-key=s3cret\nx=a\x01b\n";
  const CommandLine control = Parse({"--otlp-headers-file", file.c_str()});
  CHECK(control.exit_code == 2);
  CHECK(control.output ==
        "--otlp-headers-file " + file + ": line 2: the value of x is not a valid header value\n");
}

TEST_CASE(
    "settled --dump-config names the OTLP headers but redacts their values, and shows the "
    "headers file's path only",
    "[cli][otlp]") {
  testing::TempDir dir;
  const std::string file = dir.File("otlp-headers");
  std::ofstream(file) << "file-key=f1le-s3cret\n";
  ::setenv("OTEL_EXPORTER_OTLP_HEADERS", "env-key=env-s3cret", 1);
  const CommandLine from_env = Parse({"--dump-config"});
  ::unsetenv("OTEL_EXPORTER_OTLP_HEADERS");
  const CommandLine dumped =
      Parse({"--dump-config", "--otlp-header", "api-key=s3cret,x-tenant=7", "--otlp-header",
             "b=flag-s3cret", "--otlp-headers-file", file.c_str()});
  REQUIRE(dumped.exit_now);
  CHECK(dumped.exit_code == 0);
  CHECK_THAT(dumped.output,
             Catch::Contains("\n# otlp-header=[\"api-key=<redacted>\", \"x-tenant=<redacted>\", "
                             "\"b=<redacted>\"]"));
  CHECK_THAT(dumped.output, Catch::Contains("\notlp-headers-file=\"" + file + "\"\n"));
  CHECK_THAT(dumped.output, !Catch::Contains("s3cret") && !Catch::Contains("x-tenant=7"));
  CHECK_THAT(from_env.output, Catch::Contains("\n# otlp-header=[\"env-key=<redacted>\"]"));
  CHECK_THAT(from_env.output, !Catch::Contains("s3cret"));
  // Without headers the line is as any unset option's.
  CHECK_THAT(Parse({"--dump-config"}).output, Catch::Contains("\n# otlp-header=\"\"\n"));

  // Read back, the dump sends the file's headers, and none with a redacted value.
  const std::string path = WriteConfig(dir, dumped.output);
  const CommandLine again = Parse({"--config", path.c_str()});
  REQUIRE_FALSE(again.exit_now);
  CHECK(again.config.otlp_headers == Headers{{"file-key", "f1le-s3cret"}});
}

TEST_CASE("settled --dump-config redacts tokens given as flags, and says where they belong",
          "[cli][tokens]") {
  testing::TempDir dir;
  const std::string file = dir.File("tokens");
  std::ofstream(file) << "admin f1le-admin-s3cret-0123\n";
  const CommandLine dumped = Parse({"--dump-config", "--read-token", "read-s3cret-0123456789",
                                    "--client-token", "client-s3cret-012345678", "--client-token",
                                    "client-s3cret-876543210", "--token-file", file.c_str()});
  REQUIRE(dumped.exit_now);
  CHECK(dumped.exit_code == 0);
  CHECK_THAT(dumped.output, !Catch::Contains("s3cret"));
  CHECK_THAT(dumped.output, Catch::Contains("\n# read-token=[\"<redacted>\"]  # tokens redacted"));
  CHECK_THAT(
      dumped.output,
      Catch::Contains("\n# client-token=[\"<redacted>\", \"<redacted>\"]  # tokens redacted"));
  CHECK_THAT(dumped.output, Catch::Contains("\n# admin-token=\"\"\n"));
  CHECK_THAT(dumped.output, Catch::Contains("\ntoken-file=\"" + file + "\"\n"));

  // Read back, it grants what the file grants, and nothing the flags did.
  const CommandLine again = Parse({"--config", WriteConfig(dir, dumped.output).c_str()});
  REQUIRE_FALSE(again.exit_now);
  CHECK(again.config.api.tokens.Grant(nullptr) == api::Access::kNone);
  const std::string admin = "Bearer f1le-admin-s3cret-0123";
  const std::string reader = "Bearer read-s3cret-0123456789";
  CHECK(again.config.api.tokens.Grant(&admin) == api::Access::kAdmin);
  CHECK(again.config.api.tokens.Grant(&reader) == api::Access::kNone);
}

}  // namespace
}  // namespace settle::app
