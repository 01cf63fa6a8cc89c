// The options of --help's "TLS" group (option_groups.h).
#include "option_groups.h"

#include <CLI/CLI.hpp>

namespace settle::app {

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

}  // namespace settle::app
