// order-msg: a transactional message from an order service to a loyalty service, each with
// its own SQLite database. Placing an order commits the order row and the message's barrier
// row in one local transaction (sdk::Msg::DoAndSubmit); settled then delivers "add points" to
// the loyalty service, exactly when that transaction committed, even if the order service dies
// before its submit: settled asks the order service's QueryPrepared, which answers from the
// barrier row. The loyalty service's barrier makes redeliveries add nothing.
//
//   order-msg loyalty --port 8082 --db loyalty.db
//   order-msg orders --port 8083 --db orders.db --loyalty http://127.0.0.1:8082
//     --coordinator http://127.0.0.1:36789/api/settle
//   curl http://127.0.0.1:8083/api/orders -d '{"order_id":"o1","customer":"alice","amount":120}'
//
// Each mode prints "order-msg <mode> listening on http://HOST:PORT" once it serves, then one
// line per order or delivery. Exit codes: 0 on SIGTERM/SIGINT, 1 when it cannot start, 2 for
// bad arguments.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>

#include "loyalty_service.h"
#include "order_service.h"
#include "settle/core/stop_signals.h"

using namespace settle::order_msg;

namespace {

// Starts `service`, says where it listens, and serves until SIGTERM or SIGINT.
template <typename Service>
int Serve(const char* mode, settle::Result<std::unique_ptr<Service>> service,
          const std::string& host, int port) {
  if (!service) return std::fprintf(stderr, "%s\n", service.status().ToString().c_str()), 1;
  auto bound = (*service)->Start(host, port);
  if (!bound) return std::fprintf(stderr, "%s\n", bound.status().ToString().c_str()), 1;
  std::printf("order-msg %s listening on http://%s:%d\n", mode, host.c_str(), *bound);
  std::fflush(stdout);
  settle::WaitForStopSignal();
  (*service)->Stop();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"order-msg: an order service and a loyalty service joined by a message"};
  app.require_subcommand(1);
  std::string host = "127.0.0.1";
  int port = 0;

  LoyaltyServiceOptions loyalty;
  CLI::App* loyalty_mode = app.add_subcommand("loyalty", "The loyalty service (message receiver)");
  OrderServiceOptions orders;
  CLI::App* orders_mode = app.add_subcommand("orders", "The order service (message sender)");
  for (CLI::App* mode : {loyalty_mode, orders_mode}) {
    mode->add_option("--port", port, "Port to listen on (0: any free port)")
        ->required()
        ->check(CLI::Range(0, 65535));
    mode->add_option("--host", host, "Address to listen on")->capture_default_str();
  }
  loyalty_mode->add_option("--db", loyalty.db_path, "SQLite file (created if missing)")->required();
  loyalty_mode->add_flag("--lose-first-answer", loyalty.lose_first_answer,
                         "Demo: apply the first delivery of each message but answer 503, so "
                         "that settled redelivers it and the barrier skips the repeat");

  orders_mode->add_option("--db", orders.db_path, "SQLite file (created if missing)")->required();
  orders_mode
      ->add_option("--coordinator", orders.coordinator,
                   "settled's API base, e.g. http://127.0.0.1:36789/api/settle")
      ->required();
  orders_mode->add_option("--loyalty", orders.loyalty, "The loyalty service, http://HOST:PORT")
      ->required();
  int timeout_to_fail = 1;
  orders_mode
      ->add_option("--timeout-to-fail", timeout_to_fail,
                   "Seconds settled waits for an order's submit before it asks QueryPrepared "
                   "(short, for the demo)")
      ->check(CLI::Range(1, 86'400))
      ->capture_default_str();
  bool crash_before = false;
  bool crash_after = false;
  auto* before = orders_mode->add_flag(
      "--crash-before-commit", crash_before,
      "Test/demo hook: SIGKILL this process inside the next order's local transaction");
  orders_mode
      ->add_flag("--crash-after-commit", crash_after,
                 "Test/demo hook: SIGKILL this process right after the next order's local "
                 "commit, before its submit")
      ->excludes(before);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  orders.timeout_to_fail = std::chrono::seconds(timeout_to_fail);
  orders.crash = crash_before  ? CrashPoint::kBeforeCommit
                 : crash_after ? CrashPoint::kAfterCommit
                               : CrashPoint::kNone;

  settle::BlockStopSignals();  // before any thread starts
  if (*loyalty_mode) return Serve("loyalty", LoyaltyService::Open(loyalty), host, port);
  return Serve("orders", OrderService::Open(orders), host, port);
}
