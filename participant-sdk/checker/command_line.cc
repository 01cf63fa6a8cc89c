#include "command_line.h"

#include <nlohmann/json.hpp>

#include <CLI/CLI.hpp>
#include <cctype>
#include <sstream>

#include "exit_codes.h"
#include "settle/common/duration_text.h"
#include "settle/net/message.h"
#include "settle/net/url.h"

namespace settle::checker {
namespace {

constexpr const char* kDescription =
    "settle-check: checks that a participant's branch handlers survive what a Settle (or DTM)\n"
    "coordinator really does: duplicate deliveries, a cancel/compensate for a try/action that\n"
    "never ran (empty rollback), and a try/action arriving after its cancel/compensate\n"
    "(hanging). No coordinator is needed: it calls the branch URLs itself, as the coordinator\n"
    "would.";

constexpr const char* kFooter =
    "WARNING: settle-check calls the participant for real and changes its state: it reserves,\n"
    "spends and releases --body several times. Run it against a test instance, with a small\n"
    "amount.\n"
    "\n"
    "Without --state only the answers are checked; with it, settle-check reads that URL before\n"
    "and after the calls and compares the bodies exactly, so point it at something that shows\n"
    "the branch's effect (and that nothing else changes meanwhile).\n"
    "\n"
    "Exit status: 0 no check failed, 1 some check failed, 2 bad arguments or participant\n"
    "unreachable.\n"
    "\n"
    "Example:\n"
    "  settle-check --participant http://127.0.0.1:8081/api --tcc TransOut \\\n"
    "    --body '{\"account_id\":\"1\",\"amount\":1}' "
    "--state http://127.0.0.1:8081/api/accounts/1";

// Framing and the connection are settle-check's own: a header could otherwise desynchronize
// the request.
bool IsFramingHeader(std::string name) {
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
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

}  // namespace

CommandLine ParseCommandLine(int argc, const char* const* argv) {
  CLI::App app{kDescription, "settle-check"};
  app.footer(kFooter);
  std::string participant;
  std::string tcc_name;
  std::string saga_name;
  std::string body;
  std::string state_url;
  std::string timeout_text = "3s";
  std::string ca_file;
  std::vector<std::string> header_lines;
  std::vector<OpFlag> tcc_ops = {{BranchOp::kTry, "--try", "Try", {}},
                                 {BranchOp::kConfirm, "--confirm", "Confirm", {}},
                                 {BranchOp::kCancel, "--cancel", "Cancel", {}}};
  std::vector<OpFlag> saga_ops = {{BranchOp::kAction, "--action", "", {}},
                                  {BranchOp::kCompensate, "--compensate", "Compensate", {}}};

  app.add_option("--participant", participant,
                 "Base URL of the participant's branch handlers, e.g. http://127.0.0.1:8081/api")
      ->type_name("URL");
  app.add_option("--tcc", tcc_name,
                 "Check a TCC branch: <participant>/<NAME>Try, <NAME>Confirm, <NAME>Cancel")
      ->type_name("NAME");
  app.add_option("--saga", saga_name,
                 "Check a saga step: <participant>/<NAME> and <NAME>Compensate")
      ->type_name("NAME");
  for (OpFlag& f : tcc_ops) {
    app.add_option(f.flag, f.url,
                   "URL of the " + std::string(ToString(f.op)) +
                       " handler (instead of the one --tcc names)")
        ->type_name("URL");
  }
  for (OpFlag& f : saga_ops) {
    app.add_option(f.flag, f.url,
                   "URL of the " + std::string(ToString(f.op)) +
                       " handler (instead of the one --saga names)")
        ->type_name("URL");
  }
  app.add_option("--body", body, "JSON body of every branch call, e.g. '{\"amount\":1}'")
      ->type_name("JSON");
  app.add_option("--state", state_url,
                 "URL whose GET body shows the branch's effect, e.g. an account; compared "
                 "before and after the calls")
      ->type_name("URL");
  app.add_option("--timeout", timeout_text, "Timeout of each request (e.g. 500ms, 3s)")
      ->type_name("DURATION")
      ->capture_default_str();
  app.add_option("--ca-file", ca_file,
                 "PEM CA certificates that https:// participants are verified against "
                 "(default: the system's CA store)")
      ->type_name("FILE")
      ->check(CLI::ExistingFile);
  app.add_option("--header", header_lines,
                 "Extra header 'Name: value' for every request (repeatable), e.g. "
                 "'Authorization: Bearer x'")
      ->type_name("'NAME: VALUE'");

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

  auto given = [](const std::vector<OpFlag>& ops) {
    for (const OpFlag& f : ops) {
      if (!f.url.empty()) return true;
    }
    return false;
  };
  const bool tcc = !tcc_name.empty() || given(tcc_ops);
  const bool saga = !saga_name.empty() || given(saga_ops);
  if (tcc == saga) {
    return Usage(tcc ? "check one TCC branch (--tcc, --try, --confirm, --cancel) or one saga step "
                       "(--saga, --action, --compensate), not both"
                     : "name what to check: --tcc NAME or --saga NAME");
  }

  CommandLine result;
  CheckerOptions& o = result.options;
  o.trans_type = tcc ? TransType::kTcc : TransType::kSaga;
  const std::string& name = tcc ? tcc_name : saga_name;
  while (!participant.empty() && participant.back() == '/') participant.pop_back();
  for (const OpFlag& f : tcc ? tcc_ops : saga_ops) {
    std::string url = f.url;
    if (url.empty()) {
      if (name.empty() || participant.empty()) {
        return Usage(std::string(f.flag) + ": needed, or --participant URL and " +
                     (tcc ? "--tcc" : "--saga") + " NAME");
      }
      url = participant + "/" + name + f.suffix;
    }
    if (Result<net::Url> parsed = net::ParseUrl(url); !parsed) {
      return Usage(std::string(f.flag) + " " + url + ": " + parsed.status().message());
    }
    o.urls[f.op] = url;
  }
  if (!participant.empty()) {
    if (Result<net::Url> parsed = net::ParseUrl(participant); !parsed) {
      return Usage("--participant " + participant + ": " + parsed.status().message());
    }
  }

  if (!body.empty() && !nlohmann::json::accept(body)) {
    return Usage("--body: not valid JSON: " + body);
  }
  o.body = body;
  o.ca_file = ca_file;

  if (!state_url.empty()) {
    if (Result<net::Url> parsed = net::ParseUrl(state_url); !parsed) {
      return Usage("--state " + state_url + ": " + parsed.status().message());
    }
    o.state_url = state_url;
  }

  Result<Duration> timeout = ParseDuration(timeout_text);
  if (!timeout) return Usage("--timeout " + timeout_text + ": " + timeout.status().message());
  if (timeout->count() <= 0) return Usage("--timeout: must be positive");
  o.timeout = *timeout;

  for (const std::string& line : header_lines) {
    const auto colon = line.find(':');
    const std::string header_name = Trim(line.substr(0, colon));
    const std::string value = colon == std::string::npos ? "" : Trim(line.substr(colon + 1));
    if (colon == std::string::npos || !net::IsValidHeaderName(header_name) ||
        !net::IsValidHeaderValue(value)) {
      return Usage("--header '" + line + "': expected 'Name: value'");
    }
    if (IsFramingHeader(header_name)) {
      return Usage("--header '" + line + "': settle-check sets " + header_name + " itself");
    }
    o.headers.emplace_back(header_name, value);
  }
  return result;
}

}  // namespace settle::checker
