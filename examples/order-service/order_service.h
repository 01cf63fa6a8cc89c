#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "inventory.h"
#include "order_steps.h"
#include "payments.h"
#include "saga_outbox.h"
#include "settle/core/clock.h"
#include "settle/sdk/barrier_cleaner.h"
#include "settle/sdk/client.h"
#include "settle/sdk/idempotency_cleaner.h"
#include "settle/sdk/idempotency_guard.h"
#include "settle/sdk/participant.h"
#include "settle/sdk/sqlite_barrier_store.h"
#include "settle/sdk/sqlite_idempotency_store.h"

namespace settle::order_service {

// A test and demo hook: where creating an order kills this process with SIGKILL, as a crash
// or kill -9 would.
enum class CrashPoint {
  kNone,
  kBeforeCommit,  // in the handler, after its writes: the order and its answer never commit
  kAfterCommit,   // right after the commit, before the answer is sent and the saga submitted
};

struct OrderServiceOptions {
  std::string db_path;
  std::string coordinator;           // API base, e.g. http://127.0.0.1:36789/api/settle
  std::int64_t initial_stock = 100;  // units of every item before its first order
  // How long a request's claim on its Idempotency-Key holds (IdempotencyOptions::lease): after
  // a crash mid-request, retries get 409 until it runs out.
  Duration claim_lease{30'000};
  Duration outbox_interval{5'000};  // how often sagas left unsubmitted are tried again
  CrashPoint crash = CrashPoint::kNone;
  // With keys, the saga's steps run only the calls settled signed with one of them
  // (docs/protocol.md §4.9); POST /orders and the reads are the service's own, never checked.
  std::optional<sdk::SignedCalls> signed_calls;
  // The names settled calls the steps by (host:port); empty: 127.0.0.1:PORT, localhost:PORT.
  std::vector<std::string> authorities;
};

// The order service, with the inventory and payment participants of its saga in the same
// process and SQLite file:
//
//   POST /orders {"item","quantity"} with an Idempotency-Key: 201 {"order_id","gid","status"}
//   GET /orders, GET /orders/<order_id>, GET /stock/<item>, GET /payments
//   /saga/...: the saga's steps (OrderSteps, Inventory, Payments)
//
// POST /orders runs under an IdempotencyGuard: the order row (pending) and the stored answer
// commit in one transaction; a retry with the key gets that answer and creates nothing. After
// the commit, the SagaOutbox submits the order's saga, with a gid derived from the key. Prints
// one line per order and per saga submitted.
class OrderService {
 public:
  static Result<std::unique_ptr<OrderService>> Open(OrderServiceOptions options);
  ~OrderService();

  // Listens on 127.0.0.1:port (0: any free port), starts the outbox and the cleaners;
  // returns the port.
  Result<int> Start(int port);
  void Stop();

 private:
  OrderService(OrderServiceOptions options, std::unique_ptr<sdk::SqliteBarrierStore> store,
               std::unique_ptr<sdk::SqliteIdempotencyStore> keys,
               std::unique_ptr<sdk::Client> client);

  sdk::HttpReply PostOrder(const sdk::HttpRequest& request);
  sdk::HttpReply CreateOrder(const sdk::HttpRequest& request, sdk::BarrierTransaction& tx);
  sdk::HttpReply ListOrders();
  sdk::HttpReply CountOrders();
  sdk::HttpReply GetOrder(const sdk::HttpRequest& request);
  sdk::HttpReply GetStock(const sdk::HttpRequest& request);
  sdk::HttpReply ListPayments();

  const OrderServiceOptions options_;
  SystemClock clock_;
  std::unique_ptr<sdk::SqliteBarrierStore> store_;
  std::unique_ptr<sdk::SqliteIdempotencyStore> keys_;
  std::unique_ptr<sdk::Client> client_;
  sdk::IdempotencyGuard guard_;
  Inventory inventory_;
  Payments payments_;
  OrderSteps steps_;
  sdk::Barrier barrier_table_;  // the three participants' barrier rows, for the cleaner
  sdk::BarrierCleaner barrier_cleaner_;
  sdk::IdempotencyCleaner key_cleaner_;
  std::unique_ptr<SagaOutbox> outbox_;  // once the port is known
  // Last: stops before what its handlers use goes.
  sdk::Participant participant_;
};

}  // namespace settle::order_service
