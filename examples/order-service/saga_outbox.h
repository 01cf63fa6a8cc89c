#pragma once

#include <cstddef>
#include <string>

#include "order.h"
#include "settle/core/clock.h"
#include "settle/core/periodic_thread.h"
#include "settle/sdk/client.h"
#include "settle/sdk/sqlite_barrier_store.h"

namespace settle::order_service {

// Starts the saga of every committed order whose saga the coordinator has not accepted yet
// (orders.saga_submitted = 0), then marks it submitted: for one order right after POST /orders
// committed it, and for all of them at Start() and every `interval` after. So an order
// committed by a process that died, or could not reach the coordinator, before its submit
// still gets its saga, and only one: the gid is the order's, and the coordinator takes a
// repeated submit of a saga it holds as that saga (docs/protocol.md §3.5: 200 while it is
// submitted, 409 "gid ... is succeed|failed" once it ended, which counts as submitted here).
//
// The saga: accept the order (compensation: cancel it), reserve stock (release), charge the
// payment (refund), complete the order; every URL on `self_url`, this process's own port.
// Thread-safe; Start and Stop from one thread.
class SagaOutbox {
 public:
  SagaOutbox(sdk::SqliteBarrierStore& store, sdk::Client& client, std::string self_url,
             Duration interval);
  ~SagaOutbox();  // Stop()

  void Start();
  void Stop();

  // Submits the saga of the order with `gid` unless it was submitted before.
  Status Submit(const std::string& gid);
  // Submits every saga not submitted yet; returns how many it submitted.
  Result<std::size_t> SubmitAll();

 private:
  Status Submit(const Order& order);

  sdk::SqliteBarrierStore& store_;
  sdk::Client& client_;
  const std::string self_url_;
  PeriodicThread thread_;
};

}  // namespace settle::order_service
