// order-service: orders whose POST is idempotent (sdk::IdempotencyGuard) and whose saga
// (accept order -> reserve stock -> charge payment -> complete order) runs on settled against
// the inventory and payment participants hosted in this same process and SQLite file.
//
//   order-service --port 8090 --db orders.db --coordinator http://127.0.0.1:36789/api/settle
//   curl -H 'Idempotency-Key: k1' http://127.0.0.1:8090/orders -d '{"item":"tea","quantity":2}'
//
// Prints "order-service: listening on http://127.0.0.1:PORT" once it serves, then one line
// per order and per saga submitted. Exit codes: 0 on SIGTERM/SIGINT, 1 when it cannot start,
// 2 for bad arguments.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "order_service.h"
#include "settle/core/stop_signals.h"

using namespace settle::order_service;

int main(int argc, char** argv) {
  CLI::App app{"order-service: idempotent orders, each with its saga on settled"};
  int port = 0;
  OrderServiceOptions options;
  app.add_option("--port", port, "Port to listen on, on 127.0.0.1 (0: any free port)")
      ->required()
      ->check(CLI::Range(0, 65535));
  app.add_option("--db", options.db_path, "SQLite file (created if missing)")->required();
  app.add_option("--coordinator", options.coordinator,
                 "settled's API base, e.g. http://127.0.0.1:36789/api/settle")
      ->required();
  app.add_option("--stock", options.initial_stock,
                 "Units of every item in stock before its first order")
      ->check(CLI::Range(0, 1'000'000'000))
      ->capture_default_str();
  int lease_seconds = 30;
  app.add_option("--claim-lease", lease_seconds,
                 "Seconds a request holds its Idempotency-Key while it runs; after a crash, "
                 "retries get 409 until it runs out")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  std::vector<std::string> coordinator_keys;
  app.add_option("--coordinator-key", coordinator_keys,
                 "Run only the saga step calls settled signed with this key: its Ed25519 public "
                 "key in PEM, or the shared secret settled --signing-key holds, declared as "
                 "hmac:<base64>; any other file is refused (repeatable); a Try would run only "
                 "with settled's countersignature of its registration")
      ->check(CLI::ExistingFile);
  app.add_option("--authority", options.authorities,
                 "With --coordinator-key: a name settled calls this service's step URLs by "
                 "(host:port, as in the URLs; repeatable). A call signed for any other is "
                 "refused. Default: 127.0.0.1:PORT and localhost:PORT");
  bool crash_before = false;
  bool crash_after = false;
  auto* before = app.add_flag("--crash-before-commit", crash_before,
                              "Test/demo hook: SIGKILL this process in the next new order's "
                              "handler, after its writes and before their commit");
  app.add_flag("--crash-after-commit", crash_after,
               "Test/demo hook: SIGKILL this process right after the next new order "
               "committed, before its answer and its saga submit")
      ->excludes(before);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  options.claim_lease = std::chrono::seconds(lease_seconds);
  if (!coordinator_keys.empty()) {
    auto keys = settle::sdk::LoadVerifyingKeys(coordinator_keys);
    if (!keys) {
      return std::fprintf(stderr, "--coordinator-key: %s\n", keys.status().message().c_str()), 2;
    }
    options.signed_calls = settle::sdk::SignedCalls{
        .keys = std::move(*keys), .try_policy = settle::sdk::SignedCalls::TryPolicy::kRegistered};
    std::printf("order-service: runs the saga step calls settled signed with %s\n",
                settle::sdk::DescribeTrustedKeys(*options.signed_calls).c_str());
  }
  options.crash = crash_before  ? CrashPoint::kBeforeCommit
                  : crash_after ? CrashPoint::kAfterCommit
                                : CrashPoint::kNone;

  settle::BlockStopSignals();  // before any thread starts
  auto service = OrderService::Open(options);
  if (!service) return std::fprintf(stderr, "%s\n", service.status().ToString().c_str()), 1;
  auto bound = (*service)->Start(port);
  if (!bound) return std::fprintf(stderr, "%s\n", bound.status().ToString().c_str()), 1;
  std::printf("order-service: listening on http://127.0.0.1:%d\n", *bound);
  std::fflush(stdout);
  settle::WaitForStopSignal();
  (*service)->Stop();
  return 0;
}
