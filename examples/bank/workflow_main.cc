// bank-workflow: a money transfer between two banks (bank-participant) written as a workflow
// (participant-sdk/README.md, "Workflows"): straight-line code whose two steps, each a TCC
// branch, settled records once. Kill the service between its steps and start it again: settled
// resumes the workflow at its resume URL, the recorded step is not run again, and the money
// moves exactly once.
//
//   POST /api/transfers?gid=G  {"from_bank":"http://127.0.0.1:8081","from":"1",
//                               "to_bank":"http://127.0.0.1:8082","to":"2","amount":30}
//   -> 200 {"gid","result"}  409 {"reason"} (refused: nothing moved)
//      503 {"message"} (stopped before the end: settled finishes it)
//   GET /healthz -> 200
#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "settle/core/stop_signals.h"
#include "settle/sdk/client.h"
#include "settle/sdk/participant.h"
#include "settle/sdk/workflow.h"
#include "settle/signing/keys.h"

namespace {

using namespace settle;
using namespace settle::sdk;
using nlohmann::json;

struct TransferInput {
  std::string from_bank, from, to_bank, to;
  long long amount = 0;
};

// The input, checked before any step runs: the banks would refuse a malformed body with a 400,
// which a step takes for an error to retry, not for a refusal.
std::optional<TransferInput> ParseInput(const std::string& input) {
  const json t = json::parse(input, nullptr, false);
  if (!t.is_object()) return std::nullopt;
  for (const char* key : {"from_bank", "from", "to_bank", "to"}) {
    if (!t.contains(key) || !t[key].is_string()) return std::nullopt;
  }
  if (!t.contains("amount") || !t["amount"].is_number_integer() || t["amount"] <= 0) {
    return std::nullopt;
  }
  return TransferInput{t["from_bank"], t["from"], t["to_bank"], t["to"], t["amount"]};
}

// One side of the transfer: the bank's branch body, and that bank's TCC URLs for `side`.
std::string BankBody(const std::string& account, long long amount) {
  return json{{"account_id", account}, {"amount", amount}}.dump();
}
Workflow::TccUrls BankUrls(const std::string& bank, const std::string& side) {
  return {.try_url = bank + "/api/" + side + "Try",
          .confirm_url = bank + "/api/" + side + "Confirm",
          .cancel_url = bank + "/api/" + side + "Cancel"};
}

// The workflow: freeze the money at the payer's bank, then credit the payee's. A refusal of
// either fails it and cancels what was done; success confirms both.
asio::awaitable<Result<std::string>> Transfer(Workflow& wf, std::string input) {
  const std::optional<TransferInput> t = ParseInput(input);
  if (!t) co_return Status::Conflict("input: expected {from_bank, from, to_bank, to, amount > 0}");
  WorkflowStep out =
      wf.TccStep("trans-out", BankUrls(t->from_bank, "TransOut"), BankBody(t->from, t->amount));
  Result<std::string> frozen = co_await wf.Do(out);
  if (!frozen) co_return frozen.status();
  WorkflowStep in =
      wf.TccStep("trans-in", BankUrls(t->to_bank, "TransIn"), BankBody(t->to, t->amount));
  Result<std::string> credited = co_await wf.Do(in);
  if (!credited) co_return credited.status();
  co_return "moved " + std::to_string(t->amount);
}

// The bearer token in `path`: its first line, without surrounding blanks.
Result<std::string> ReadToken(const std::string& path) {
  std::ifstream file(path);
  std::string line;
  if (!file || !std::getline(file, line)) return Status::InvalidArgument("cannot read " + path);
  const std::size_t first = line.find_first_not_of(" \t\r");
  const std::size_t last = line.find_last_not_of(" \t\r");
  if (first == std::string::npos) return Status::InvalidArgument(path + " holds no token");
  return line.substr(first, last - first + 1);
}

HttpReply JsonReply(int status, json body) { return HttpReply{status, body.dump()}; }

}  // namespace

int main(int argc, char** argv) {
  std::string coordinator = "http://127.0.0.1:36789";
  std::string host = "127.0.0.1";
  int port = 8090;
  int retry_seconds = 10;
  CLI::App app{"bank-workflow: transfers between two banks, written as a workflow"};
  app.add_option("--coordinator", coordinator, "settled's base URL")->capture_default_str();
  app.add_option("--host", host, "Address to listen on")->capture_default_str();
  // Fixed: settled stores the resume URL with each workflow, so the service must come back there.
  app.add_option("--port", port, "Port to listen on (the resume URL's)")
      ->check(CLI::Range(1, 65535))
      ->capture_default_str();
  app.add_option("--retry-interval", retry_seconds,
                 "Seconds before settled resumes a workflow that stopped (then with backoff)")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  std::string signing_key;
  app.add_option("--signing-key", signing_key,
                 "Sign the steps' calls with this key (PEM Ed25519 private key, or hmac:<base64>): "
                 "banks started with --workflow-key run only signed ones")
      ->check(CLI::ExistingFile);
  std::string token_file;
  app.add_option("--token-file", token_file,
                 "Send settled the client token this file holds (settled with tokens): the "
                 "workflows it starts are this service's, and it resumes no other client's")
      ->check(CLI::ExistingFile);
  CLI11_PARSE(app, argc, argv);
  BlockStopSignals();

  ClientOptions link;
  if (!signing_key.empty()) {
    Result<signing::SigningKey> key = signing::SigningKey::FromFile(signing_key);
    if (!key) return std::fprintf(stderr, "--signing-key: %s\n", key.status().message().c_str()), 2;
    link.signing_key = std::move(*key);
  }
  if (!token_file.empty()) {
    Result<std::string> token = ReadToken(token_file);
    if (!token)
      return std::fprintf(stderr, "--token-file: %s\n", token.status().message().c_str()), 2;
    link.headers["Authorization"] = "Bearer " + *token;
  }
  Result<std::unique_ptr<Client>> client = Client::Create(coordinator + "/api/settle", link);
  if (!client)
    return std::fprintf(stderr, "--coordinator: %s\n", client.status().message().c_str()), 2;
  WorkflowsOptions options{.resume_url = "http://" + host + ":" + std::to_string(port) + "/resume"};
  options.options.retry_interval = std::chrono::seconds(retry_seconds);
  Workflows workflows(**client, options);
  workflows.Register("transfer", Transfer).IgnoreError();

  Participant participant({.threads = 8, .io_threads = 1});
  participant.OnResume("/resume", workflows.Resumer());
  participant.OnGet("/healthz", [](const HttpRequest&) { return JsonReply(200, {{"ok", true}}); });
  participant.OnPost("/api/transfers", [&workflows](const HttpRequest& req) {
    const auto gid = req.params.find("gid");
    if (gid == req.params.end()) return JsonReply(400, {{"message", "gid: required"}});
    Result<std::string> done = workflows.Execute("transfer", gid->second, req.body);
    if (done) return JsonReply(200, {{"gid", gid->second}, {"result", *done}});
    const Status& why = done.status();
    if (why.code() == StatusCode::kConflict) return JsonReply(409, {{"reason", why.message()}});
    if (why.code() == StatusCode::kInvalidArgument)
      return JsonReply(400, {{"message", why.message()}});
    return JsonReply(503, {{"message", why.message() + " (settled resumes it)"}});
  });
  const Result<int> bound = participant.Start(host, port);
  if (!bound) {
    std::fprintf(stderr, "cannot listen on %s:%d: %s\n", host.c_str(), port,
                 bound.status().message().c_str());
    return 1;
  }
  std::printf("bank-workflow listening on http://%s:%d\n", host.c_str(), *bound);
  std::fflush(stdout);
  WaitForStopSignal();
  participant.Stop();
  return 0;
}
