#pragma once

#include <memory>
#include <string>

#include "settle/core/clock.h"
#include "settle/sdk/idempotency_guard.h"
#include "settle/sdk/participant.h"
#include "settle/sdk/sqlite_barrier_store.h"
#include "settle/sdk/sqlite_idempotency_store.h"
#include "temp_dir.h"

namespace settle::testing {

// How an OrderEntryPoint handles Idempotency-Key.
struct OrderEntryPointOptions {
  // Behind IdempotencyGuard (true), or not at all: every POST creates an order.
  bool guarded = true;
  bool key_required = true;  // the guard's IdempotencyOptions::key_required
  // Answers {"order_id":N} (true) or the same {"status":"created"} every time, so that only
  // the state shows a duplicate.
  bool numbered_answers = true;
};

// A service's own entry point served on 127.0.0.1 at a port of the kernel's choosing:
// POST /orders creates an order (a row in a fresh SQLite file) and answers 201; GET
// /orders/count answers {"orders":N}. Correct behind the guard; the unguarded variant is the
// bug settle-check --entry is there to find.
class OrderEntryPoint {
 public:
  explicit OrderEntryPoint(OrderEntryPointOptions options = {});
  ~OrderEntryPoint();  // stops serving

  std::string Url(const std::string& path) const;

 private:
  sdk::HttpReply CreateOrder(const sdk::HttpRequest& request, sdk::BarrierTransaction& tx);
  sdk::HttpReply CountOrders();

  OrderEntryPointOptions options_;
  TempDir dir_;
  SystemClock clock_;
  std::unique_ptr<sdk::SqliteBarrierStore> barrier_;
  std::unique_ptr<sdk::SqliteIdempotencyStore> keys_;
  std::unique_ptr<sdk::IdempotencyGuard> guard_;
  sdk::Participant participant_;  // last: stops serving before what its handlers use goes
  int port_ = 0;
};

}  // namespace settle::testing
