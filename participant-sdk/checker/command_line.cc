#include "command_line.h"

#include <nlohmann/json.hpp>

#include <CLI/CLI.hpp>
#include <memory>
#include <sstream>

#include "exit_codes.h"
#include "settle/core/ascii.h"
#include "settle/core/duration_text.h"
#include "settle/core/file_text.h"
#include "settle/core/grpc_target.h"
#include "settle/core/status.h"
#include "settle/core/url.h"
#include "settle/net/client.h"
#include "settle/net/message.h"

namespace settle::checker {
namespace {

constexpr const char* kDescription =
    "settle-check: checks that a participant's branch handlers survive what a Settle (or DTM)\n"
    "coordinator really does: duplicate deliveries, a cancel/compensate for a try/action that\n"
    "never ran (empty rollback), and a try/action arriving after its cancel/compensate\n"
    "(hanging). No coordinator is needed: it calls the branch URLs itself, as the coordinator\n"
    "would: over HTTP, or over gRPC when a branch is a gRPC method\n"
    "(--participant grpc://host:port/package.Service).\n"
    "\n"
    "With --entry it checks a service's own entry point instead (a POST that creates something):\n"
    "that it keeps the Idempotency-Key contract for missing, invalid, repeated, reused and\n"
    "concurrent keys.";

constexpr const char* kFooter =
    "WARNING: settle-check calls the participant for real and changes its state: it reserves,\n"
    "spends and releases --body several times (with --entry: it POSTs --body up to\n"
    "7 + --concurrency times, and a correct service acts on it 3 to 5 times). Run it against\n"
    "a test instance, with a small amount.\n"
    "\n"
    "Without --state only the answers are checked; with it, settle-check reads that URL before\n"
    "and after the calls and compares the bodies exactly, so point it at something that shows\n"
    "the branch's effect (and that nothing else changes meanwhile). With --entry, the\n"
    "concurrent check compares effects instead: numbers in the JSON state, such as a count.\n"
    "\n"
    "Exit status: 0 no check failed, 1 some check failed, 2 bad arguments or participant\n"
    "unreachable.\n"
    "\n"
    "Examples:\n"
    "  settle-check --participant http://127.0.0.1:8081/api --tcc TransOut \\\n"
    "    --body '{\"account_id\":\"1\",\"amount\":1}' "
    "--state http://127.0.0.1:8081/api/accounts/1\n"
    "  settle-check --participant grpc://127.0.0.1:8083/bank.Bank --tcc TransOut \\\n"
    "    --body '{\"account_id\":\"1\",\"amount\":1}' "
    "--state http://127.0.0.1:8082/api/accounts/1\n"
    "  settle-check --entry http://127.0.0.1:8090/orders --body '{\"item\":\"book\"}' \\\n"
    "    --state http://127.0.0.1:8090/orders/count";

// Framing and the connection are settle-check's own: a header could otherwise desynchronize
// the request.
bool IsFramingHeader(std::string_view field) {
  const std::string name = AsciiLowercase(field);
  return name == "content-length" || name == "transfer-encoding" || name == "connection" ||
         name == "host";
}

std::string Trim(const std::string& s) {
  const auto begin = s.find_first_not_of(" \t");
  if (begin == std::string::npos) return {};
  return s.substr(begin, s.find_last_not_of(" \t") - begin + 1);
}

CommandLine Usage(std::string message) {
  CommandLine result;
  result.exit_now = true;
  result.exit_code = kExitUsage;
  result.output = "settle-check: " + message + "\nRun with --help for more information.\n";
  return result;
}

struct OpFlag {
  BranchOp op;
  const char* flag;
  const char* suffix;  // appended to NAME for the default URL
  std::string url;     // as given
};

// What the command line says, before it is checked.
struct Flags {
  std::string participant;
  std::string tcc_name;
  std::string saga_name;
  std::string body;
  std::string body_file;
  std::string signing_key_file;
  std::string state_url;
  std::string timeout_text = "3s";
  std::string ca_file;
  std::string tls_client_cert;
  std::string tls_client_key;
  std::vector<std::string> header_lines;
  std::string entry;
  std::string other_body;
  bool key_optional = false;
  std::size_t concurrency = 8;
  std::vector<OpFlag> tcc_ops = {{BranchOp::kTry, "--try", "Try", {}},
                                 {BranchOp::kConfirm, "--confirm", "Confirm", {}},
                                 {BranchOp::kCancel, "--cancel", "Cancel", {}}};
  std::vector<OpFlag> saga_ops = {{BranchOp::kAction, "--action", "", {}},
                                  {BranchOp::kCompensate, "--compensate", "Compensate", {}}};
};

void AddOptions(CLI::App& app, Flags& f) {
  app.add_option("--participant", f.participant,
                 "Base URL of the participant's branch handlers, e.g. http://127.0.0.1:8081/api")
      ->type_name("URL");
  app.add_option("--tcc", f.tcc_name,
                 "Check a TCC branch: <participant>/<NAME>Try, <NAME>Confirm, <NAME>Cancel")
      ->type_name("NAME");
  app.add_option("--saga", f.saga_name,
                 "Check a saga step: <participant>/<NAME> and <NAME>Compensate")
      ->type_name("NAME");
  for (OpFlag& op : f.tcc_ops) {
    app.add_option(op.flag, op.url,
                   "URL of the " + std::string(ToString(op.op)) +
                       " handler (instead of the one --tcc names)")
        ->type_name("URL");
  }
  for (OpFlag& op : f.saga_ops) {
    app.add_option(op.flag, op.url,
                   "URL of the " + std::string(ToString(op.op)) +
                       " handler (instead of the one --saga names)")
        ->type_name("URL");
  }
  app.add_option("--body", f.body,
                 "JSON body of every branch call (with --entry: of every request), e.g. "
                 "'{\"amount\":1}'")
      ->type_name("JSON");
  app.add_option("--body-file", f.body_file,
                 "The body of every branch call, byte for byte, from a file: for a gRPC method, "
                 "its serialized request message (instead of --body)")
      ->type_name("FILE");
  app.add_option("--signing-key", f.signing_key_file,
                 "Sign every branch call with this key, as settled --signing-key does, and also "
                 "check that the participant refuses an unsigned and a tampered "
                 "confirm (compensate) with 401 (gRPC: UNAUTHENTICATED): an Ed25519 private key "
                 "in PEM or a secret declared as hmac:<base64>; any other file is refused")
      ->type_name("FILE");
  app.add_option("--state", f.state_url,
                 "URL whose GET body shows the branch's effect, e.g. an account; compared "
                 "before and after the calls")
      ->type_name("URL");
  app.add_option("--timeout", f.timeout_text, "Timeout of each request (e.g. 500ms, 3s)")
      ->type_name("DURATION")
      ->capture_default_str();
  app.add_option("--ca-file", f.ca_file,
                 "PEM CA certificates that https:// and grpcs:// participants are verified "
                 "against (default: the system's CA store)")
      ->type_name("FILE")
      ->check(CLI::ExistingFile);
  app.add_option("--tls-client-cert", f.tls_client_cert,
                 "PEM client certificate (chain) presented to https:// and grpcs:// "
                 "participants that require one (mutual TLS), as settled --tls-client-cert; "
                 "with --tls-client-key")
      ->type_name("FILE")
      ->check(CLI::ExistingFile);
  app.add_option("--tls-client-key", f.tls_client_key, "PEM private key of --tls-client-cert")
      ->type_name("FILE")
      ->check(CLI::ExistingFile);
  app.add_option("--header", f.header_lines,
                 "Extra header 'Name: value' for every request (repeatable), e.g. "
                 "'Authorization: Bearer x'")
      ->type_name("'NAME: VALUE'");
  app.add_option("--entry", f.entry,
                 "Check an entry point's Idempotency-Key handling instead of a branch: the URL "
                 "that --body is POSTed to, e.g. http://127.0.0.1:8090/orders")
      ->type_name("URL");
  app.add_option("--other-body", f.other_body,
                 "With --entry: another request, sent with a key already used (default: --body "
                 "with a space appended)")
      ->type_name("JSON");
  app.add_flag("--key-optional", f.key_optional,
               "With --entry: the service runs a request without Idempotency-Key by design; "
               "check that it answers 2xx instead of 400");
  app.add_option("--concurrency", f.concurrency,
                 "With --entry: how many duplicates go at once in the concurrent check")
      ->type_name("N")
      ->check(CLI::Range(2, 64))
      ->capture_default_str();
}

bool AnyUrlGiven(const std::vector<OpFlag>& ops) {
  for (const OpFlag& f : ops) {
    if (!f.url.empty()) return true;
  }
  return false;
}

Status CheckUrl(const std::string& what, const std::string& url) {
  if (Result<Url> parsed = ParseUrl(url); !parsed) {
    return Status::InvalidArgument(what + " " + url + ": " + parsed.status().message());
  }
  return Status::Ok();
}

// A branch handler: an http(s):// URL, or a gRPC method (docs/protocol.md §10.4).
Status CheckBranchUrl(const std::string& what, const std::string& url) {
  if (!LooksLikeGrpcTarget(url)) return CheckUrl(what, url);
  if (Result<GrpcTarget> target = ParseGrpcTarget(url); !target) {
    return Status::InvalidArgument(what + " " + url + ": " + target.status().message());
  }
  return Status::Ok();
}

// --entry and what goes with it, which only it takes.
Status ResolveEntry(const CLI::App& app, const Flags& f, CheckerOptions& o) {
  const bool branch = !f.participant.empty() || !f.tcc_name.empty() || !f.saga_name.empty() ||
                      AnyUrlGiven(f.tcc_ops) || AnyUrlGiven(f.saga_ops);
  if (f.entry.empty()) {
    if (app.count("--other-body") > 0 || f.key_optional || app.count("--concurrency") > 0) {
      return Status::InvalidArgument(
          "--other-body, --key-optional and --concurrency go with --entry");
    }
    return Status::Ok();
  }
  if (branch) {
    return Status::InvalidArgument(
        "--entry checks an entry point, not a branch: leave out --participant, --tcc, --saga "
        "and the handlers' URLs");
  }
  if (Status s = CheckUrl("--entry", f.entry); !s.ok()) return s;
  if (f.body.empty()) return Status::InvalidArgument("--entry needs --body JSON: the request");
  o.entry_url = f.entry;
  o.key_optional = f.key_optional;
  o.concurrency = f.concurrency;
  if (app.count("--other-body") == 0) {
    // Another fingerprint for a service that hashes the bytes, as IdempotencyGuard does.
    o.other_body = f.body + " ";
    o.other_body_derived = true;
    return Status::Ok();
  }
  if (!nlohmann::json::accept(f.other_body)) {
    return Status::InvalidArgument("--other-body: not valid JSON: " + f.other_body);
  }
  if (f.other_body == f.body) {
    return Status::InvalidArgument("--other-body: must differ from --body");
  }
  o.other_body = f.other_body;
  return Status::Ok();
}

// What to check (one TCC branch or one saga step) and each handler's URL.
Status ResolveTarget(Flags& f, CheckerOptions& o) {
  const bool tcc = !f.tcc_name.empty() || AnyUrlGiven(f.tcc_ops);
  const bool saga = !f.saga_name.empty() || AnyUrlGiven(f.saga_ops);
  if (tcc == saga) {
    return Status::InvalidArgument(
        tcc ? "check one TCC branch (--tcc, --try, --confirm, --cancel) or one saga step "
              "(--saga, --action, --compensate), not both"
            : "name what to check: --tcc NAME, --saga NAME or --entry URL");
  }
  o.trans_type = tcc ? TransType::kTcc : TransType::kSaga;
  const std::string& name = tcc ? f.tcc_name : f.saga_name;
  while (!f.participant.empty() && f.participant.back() == '/') f.participant.pop_back();
  for (const OpFlag& op : tcc ? f.tcc_ops : f.saga_ops) {
    std::string url = op.url;
    if (url.empty()) {
      if (name.empty() || f.participant.empty()) {
        return Status::InvalidArgument(std::string(op.flag) +
                                       ": needed, or --participant URL and " +
                                       (tcc ? "--tcc" : "--saga") + " NAME");
      }
      url = f.participant + "/" + name + op.suffix;
    }
    if (Status s = CheckBranchUrl(op.flag, url); !s.ok()) return s;
    o.urls[op.op] = url;
  }
  if (f.participant.empty()) return Status::Ok();
  // A gRPC participant is named by its service: grpc://host:port/package.Service.
  if (LooksLikeGrpcTarget(f.participant)) {
    if (!ParseGrpcTarget(f.participant + "/Method")) {
      return Status::InvalidArgument("--participant " + f.participant +
                                     ": a gRPC participant is grpc://host:port/package.Service "
                                     "(or grpcs://, or host:port/package.Service)");
    }
    return Status::Ok();
  }
  return CheckUrl("--participant", f.participant);
  return Status::Ok();
}

// --tls-client-cert and --tls-client-key: both or neither, and a certificate and key that go
// together (checked here, so that a wrong pair is a bad argument rather than a participant
// that seems unreachable).
Status ResolveClientCertificate(const Flags& f, CheckerOptions& o) {
  if (f.tls_client_cert.empty() && f.tls_client_key.empty()) return Status::Ok();
  if (f.tls_client_key.empty()) {
    return Status::InvalidArgument("--tls-client-cert: needs --tls-client-key FILE, its key");
  }
  if (f.tls_client_cert.empty()) {
    return Status::InvalidArgument(
        "--tls-client-key: needs --tls-client-cert FILE, the certificate it goes with");
  }
  Result<std::unique_ptr<net::Client>> usable = net::Client::Create(
      {.client_cert_file = f.tls_client_cert, .client_key_file = f.tls_client_key});
  if (!usable) {
    return Status::InvalidArgument("--tls-client-cert/--tls-client-key: " +
                                   usable.status().message());
  }
  o.tls_client_cert = f.tls_client_cert;
  o.tls_client_key = f.tls_client_key;
  return Status::Ok();
}

// --body, --state, --ca-file and --timeout.
Status ResolveRequest(const Flags& f, CheckerOptions& o) {
  if (!f.body.empty() && !nlohmann::json::accept(f.body)) {
    return Status::InvalidArgument("--body: not valid JSON: " + f.body);
  }
  o.body = f.body;
  if (!f.signing_key_file.empty()) {
    if (!f.entry.empty()) return Status::InvalidArgument("--signing-key: for a branch check");
    auto key = signing::SigningKey::FromFile(f.signing_key_file);
    if (!key) return Status::InvalidArgument("--signing-key: " + key.status().message());
    o.signing_key = std::move(*key);
  }
  if (!f.body_file.empty()) {
    if (!f.body.empty() || !f.entry.empty()) {
      return Status::InvalidArgument("--body-file: the body of a branch check, instead of --body");
    }
    Result<std::string> bytes = ReadFileText(f.body_file);
    if (!bytes) return Status::InvalidArgument("--body-file: " + bytes.status().message());
    o.body = std::move(*bytes);
  }
  o.ca_file = f.ca_file;
  if (Status s = ResolveClientCertificate(f, o); !s.ok()) return s;
  if (!f.state_url.empty()) {
    if (Status s = CheckUrl("--state", f.state_url); !s.ok()) return s;
    o.state_url = f.state_url;
  }
  Result<Duration> timeout = ParseDuration(f.timeout_text);
  if (!timeout) {
    return Status::InvalidArgument("--timeout " + f.timeout_text + ": " +
                                   timeout.status().message());
  }
  if (timeout->count() <= 0) return Status::InvalidArgument("--timeout: must be positive");
  o.timeout = *timeout;
  return Status::Ok();
}

// Each --header as a (name, value) pair; framing headers are settle-check's own, and so is
// Idempotency-Key when it checks an entry point.
Status ResolveHeaders(const std::vector<std::string>& lines, CheckerOptions& o) {
  for (const std::string& line : lines) {
    const auto colon = line.find(':');
    const std::string header_name = Trim(line.substr(0, colon));
    const std::string value = colon == std::string::npos ? "" : Trim(line.substr(colon + 1));
    if (colon == std::string::npos || !IsValidHeaderName(header_name) ||
        !IsValidHeaderValue(value)) {
      return Status::InvalidArgument("--header '" + line + "': expected 'Name: value'");
    }
    if (IsFramingHeader(header_name) ||
        (!o.entry_url.empty() && net::EqualsIgnoreCase(header_name, "Idempotency-Key"))) {
      return Status::InvalidArgument("--header '" + line + "': settle-check sets " + header_name +
                                     " itself");
    }
    o.headers.emplace_back(header_name, value);
  }
  return Status::Ok();
}

}  // namespace

CommandLine ParseCommandLine(int argc, const char* const* argv) {
  CLI::App app{kDescription, "settle-check"};
  app.footer(kFooter);
  Flags flags;
  AddOptions(app, flags);
  std::ostringstream out;
  std::ostringstream err;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    CommandLine result;
    result.exit_now = true;
    result.exit_code = app.exit(e, out, err) == 0 ? 0 : kExitUsage;
    result.output = out.str() + err.str();
    return result;
  }
  CommandLine result;
  if (Status s = ResolveEntry(app, flags, result.options); !s.ok()) return Usage(s.message());
  if (result.options.entry_url.empty()) {
    if (Status s = ResolveTarget(flags, result.options); !s.ok()) return Usage(s.message());
  }
  if (Status s = ResolveRequest(flags, result.options); !s.ok()) return Usage(s.message());
  if (Status s = ResolveHeaders(flags.header_lines, result.options); !s.ok()) {
    return Usage(s.message());
  }
  return result;
}

}  // namespace settle::checker
