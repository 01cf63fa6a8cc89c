// The options of --help's "Clients and tokens" group (option_groups.h).
#include "option_groups.h"

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "settle/core/file_text.h"
#include "settle/net/client.h"

namespace settle::app {
namespace {

Status AddAll(api::AccessTokens& tokens, api::Access level, const std::vector<std::string>& values,
              const char* flag) {
  for (const std::string& token : values) {
    if (Status s = tokens.Add(level, token); !s.ok()) {
      return Status::InvalidArgument(std::string(flag) + ": " + s.message());
    }
  }
  return Status::Ok();
}

}  // namespace

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

}  // namespace settle::app
