#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "settle/core/clock.h"
#include "settle/core/protocol.h"
#include "settle/signing/keys.h"

namespace settle::checker {

// What to check, from settle-check's arguments; every URL is a valid http(s):// URL.
struct CheckerOptions {
  TransType trans_type = TransType::kTcc;
  std::map<BranchOp, std::string> urls;  // try/confirm/cancel, or action/compensate
  std::string body;  // valid JSON, --body-file's bytes, or empty (then HTTP calls are GETs)
  std::optional<std::string> state_url;
  Duration timeout = std::chrono::seconds(3);
  std::vector<std::pair<std::string, std::string>> headers;  // valid names and values
  std::string ca_file;  // verifies https:// and grpcs:// participants; empty: the system's store
  // --tls-client-cert and --tls-client-key: a certificate chain and its key (PEM), presented
  // to https:// and grpcs:// participants that ask for one (mutual TLS). Both or neither;
  // when given, they were checked to be usable together.
  std::string tls_client_cert;
  std::string tls_client_key;
  // --signing-key: calls are signed, and the signature checks run (SignatureChecks).
  std::optional<signing::SigningKey> signing_key;

  // --entry: an HTTP entry point's Idempotency-Key handling instead of a branch (`urls` is
  // then empty, trans_type unused and body a non-empty JSON text).
  std::string entry_url;
  std::string other_body;           // --other-body, or body with a space appended
  bool other_body_derived = false;  // no --other-body was given
  bool key_optional = false;        // --key-optional
  std::size_t concurrency = 8;      // --concurrency, 2 to 64
};

struct CommandLine {
  CheckerOptions options;
  // Set for --help (code 0) and for invalid arguments (code 2): print `output` and exit.
  bool exit_now = false;
  int exit_code = 0;
  std::string output;
};

// Parses settle-check's arguments (CLI11). Never throws and never exits the process.
CommandLine ParseCommandLine(int argc, const char* const* argv);

}  // namespace settle::checker
