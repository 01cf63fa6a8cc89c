// bank-participant: a bank with accounts "1".."K" in its own SQLite file, serving the branch
// URLs of a TCC transfer (TransOutTry/Confirm/Cancel, TransInTry/Confirm/Cancel) and of a saga
// transfer (TransOut, TransIn and their compensations), each guarded by the SDK's barrier, plus
// GET /api/accounts[/ID]; with --grpc-port, the same branches as gRPC methods too
// (/bank.Bank/TransOut, ...). Calls carry {"account_id":"1","amount":30}. With
// --coordinator-key, only settled's signed calls run (Trys with settled's countersignature of
// their registration), and GET /metrics counts the refused ones.

#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "bank_service.h"
#include "settle/core/duration_text.h"
#include "settle/core/stop_signals.h"
#include "transfer_request.h"

int main(int argc, char** argv) {
  settle::bank::BankOptions options;
  std::string host = "127.0.0.1";
  int port = 8081;
  CLI::App app{"bank-participant: a bank service taking part in Settle transfers"};
  app.add_option("--port", port, "Port to listen on (0: any free port)")
      ->required()
      ->check(CLI::Range(0, 65535));
  app.add_option("--db", options.db_path, "SQLite database file (created if missing)")->required();
  app.add_option("--accounts", options.accounts, "Accounts created on the first start")
      ->check(CLI::Range(1, 100'000))
      ->capture_default_str();
  app.add_option("--initial-balance", options.initial_balance,
                 "Balance of each account created on the first start")
      ->check(CLI::Range(std::int64_t{0}, settle::bank::kMaxAmount))
      ->capture_default_str();
  app.add_option("--host", host, "Address to listen on")->capture_default_str();
  int grpc_port = -1;
  app.add_option("--grpc-port", grpc_port,
                 "Also serve the branches as gRPC methods (bank.Bank/TransOut, ...) on this port "
                 "(0: any free port; absent: no gRPC)")
      ->check(CLI::Range(0, 65535));
  app.add_option("--threads", options.threads,
                 "Requests handled at once (idle keep-alive connections hold no thread)")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  std::vector<std::string> coordinator_keys;
  app.add_option("--coordinator-key", coordinator_keys,
                 "Run only the branch calls the coordinator signed with this key: its Ed25519 "
                 "public key in PEM, or the shared secret settled --signing-key holds, declared "
                 "as hmac:<base64>; any other file is refused (repeatable, for rotation). A Try "
                 "runs only with settled's countersignature of its registration, which the "
                 "SDK's initiators (transfer) send. GET /metrics counts "
                 "the refused calls by reason (Prometheus text)")
      ->check(CLI::ExistingFile);
  std::vector<std::string> workflow_keys;
  app.add_option("--workflow-key", workflow_keys,
                 "With --coordinator-key: a workflow service's key (its Ed25519 public key in "
                 "PEM, or hmac:<base64>; repeatable). A workflow's step calls, which its service "
                 "makes itself (commits and rollbacks too), run only signed by one of these; "
                 "without any, only by settled's key")
      ->check(CLI::ExistingFile);
  app.add_option("--authority", options.authorities,
                 "With --coordinator-key: a name settled calls the HTTP branches by (host:port, "
                 "as in their URLs; repeatable). A call signed for any other is refused. "
                 "Default: the listening address (and localhost:PORT on a loopback address)");
  app.add_option("--grpc-authority", options.grpc_authorities,
                 "The same for the gRPC branches (--grpc-port). Default: the gRPC listening "
                 "address");
  std::string barrier_retention = "0";
  app.add_option("--barrier-retention", barrier_retention,
                 "Delete barrier rows this old in the background, hourly (e.g. 7d; 0: keep "
                 "them); keep them well beyond the coordinator's timeouts and retries")
      ->capture_default_str();
  std::string request_timeout = settle::FormatDuration(options.request_timeout);
  app.add_option("--request-timeout", request_timeout,
                 "A request's head and body must all arrive within this of its first byte; a "
                 "client still sending then gets 408 and is disconnected (e.g. 10s)")
      ->capture_default_str();
  app.add_option("--max-connections-per-peer", options.max_connections_per_peer,
                 "Open connections from one client address (an IPv6 /64) beyond which new ones "
                 "get 503, so that one host cannot take them all; keep it above settled's "
                 "--host-max-in-flight (0: no cap)")
      ->check(CLI::Range(std::size_t{0}, std::size_t{1'000'000}))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  auto retention = settle::ParseDuration(barrier_retention);
  if (!retention) {
    return std::fprintf(stderr, "--barrier-retention: %s\n", retention.status().message().c_str()),
           2;
  }
  options.barrier_retention = *retention;
  auto request_deadline = settle::ParseDuration(request_timeout);
  if (!request_deadline || request_deadline->count() <= 0) {
    return std::fprintf(
               stderr, "--request-timeout: %s\n",
               request_deadline ? "must be positive" : request_deadline.status().message().c_str()),
           2;
  }
  options.request_timeout = *request_deadline;
  if (!workflow_keys.empty() && coordinator_keys.empty()) {
    return std::fprintf(stderr, "--workflow-key: takes --coordinator-key (signed calls)\n"), 2;
  }
  std::string trusted;  // what the startup line says of the keys
  if (!coordinator_keys.empty()) {
    auto keys = settle::sdk::LoadVerifyingKeys(coordinator_keys);
    if (!keys)
      return std::fprintf(stderr, "--coordinator-key: %s\n", keys.status().message().c_str()), 2;
    options.signed_calls = settle::sdk::SignedCalls{
        .keys = std::move(*keys), .try_policy = settle::sdk::SignedCalls::TryPolicy::kRegistered};
    auto workflow = settle::sdk::LoadVerifyingKeys(workflow_keys);
    if (!workflow) {
      return std::fprintf(stderr, "--workflow-key: %s\n", workflow.status().message().c_str()), 2;
    }
    options.signed_calls->workflow_keys = std::move(*workflow);
    trusted = settle::sdk::DescribeTrustedKeys(*options.signed_calls) + " (--coordinator-key";
    for (const std::string& file : coordinator_keys) trusted += " " + file;
    trusted += ")";
  }

  settle::BlockStopSignals();  // before any thread starts

  auto bank = settle::bank::BankService::Open(options);
  if (!bank) return std::fprintf(stderr, "%s\n", bank.status().ToString().c_str()), 1;
  // gRPC first: once the HTTP port answers, both do.
  int grpc_bound = 0;
  if (grpc_port >= 0) {
    auto started = (*bank)->StartGrpc(host, grpc_port);
    if (!started) return std::fprintf(stderr, "%s\n", started.status().ToString().c_str()), 1;
    grpc_bound = *started;
  }
  auto bound = (*bank)->Start(host, port);
  if (!bound) return std::fprintf(stderr, "%s\n", bound.status().ToString().c_str()), 1;
  if (!trusted.empty()) {
    std::printf("bank-participant runs the branch calls settled signed with %s\n", trusted.c_str());
  }
  std::printf("bank-participant listening on http://%s:%d\n", host.c_str(), *bound);
  if (grpc_bound > 0) {
    std::printf("bank-participant gRPC branches on %s:%d\n", host.c_str(), grpc_bound);
  }
  std::fflush(stdout);

  settle::WaitForStopSignal();
  (*bank)->Stop();
  return 0;
}
