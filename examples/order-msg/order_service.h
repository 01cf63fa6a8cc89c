#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "settle/core/clock.h"
#include "settle/sdk/barrier.h"
#include "settle/sdk/client.h"
#include "settle/sdk/participant.h"
#include "settle/sdk/sqlite_barrier_store.h"

namespace settle::order_msg {

// A test and demo hook: where placing an order kills this process with SIGKILL, as a crash or
// kill -9 would, to show what the coordinator's back-check recovers.
enum class CrashPoint {
  kNone,
  kBeforeCommit,  // inside the local transaction: the order never commits
  kAfterCommit,   // right after the local COMMIT, before the message's submit reaches settled
};

struct OrderServiceOptions {
  std::string db_path;
  std::string coordinator;  // API base, e.g. http://127.0.0.1:36789/api/settle
  std::string loyalty;      // the loyalty service, e.g. http://127.0.0.1:8082
  // How long settled waits for the submit before it asks QueryPrepared.
  std::chrono::seconds timeout_to_fail{1};
  CrashPoint crash = CrashPoint::kNone;
};

// The order service: POST /api/orders {"order_id","customer","amount"} inserts the order in
// its SQLite file and, in the same local transaction, the barrier row of a transactional
// message "add amount/10 points to the customer" (sdk::Msg::DoAndSubmit, gid "order-<id>"),
// which settled delivers to the loyalty service if and only if that transaction committed.
// Answers {"order_id","gid","status":"submitted"}, 409 for an order placed before, 400 for bad
// input, 503 when settled or the database cannot be reached. GET /api/orders/<id> reads an
// order; GET /api/orders/QueryPrepared answers settled's back-check from the barrier row.
// Prints one line per order placed.
class OrderService {
 public:
  static Result<std::unique_ptr<OrderService>> Open(OrderServiceOptions options);
  ~OrderService();

  // Listens on host:port (0: any free port); returns the port.
  Result<int> Start(const std::string& host, int port);
  void Stop();

 private:
  OrderService(OrderServiceOptions options, std::unique_ptr<sdk::SqliteBarrierStore> store,
               std::unique_ptr<sdk::Client> client);
  sdk::HttpReply PlaceOrder(const sdk::HttpRequest& request);
  sdk::HttpReply ListOrders();
  sdk::HttpReply GetOrder(const sdk::HttpRequest& request);

  OrderServiceOptions options_;
  SystemClock clock_;
  std::unique_ptr<sdk::SqliteBarrierStore> store_;
  sdk::Barrier barrier_;
  std::unique_ptr<sdk::Client> client_;
  std::string query_prepared_url_;  // known once listening
  // Last: stops before what its handlers use goes.
  sdk::Participant participant_;
};

}  // namespace settle::order_msg
