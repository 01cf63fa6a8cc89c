#pragma once

#include "settle/core/clock.h"
#include "settle/sdk/barrier.h"
#include "settle/sdk/participant.h"
#include "settle/sdk/sqlite_barrier_store.h"

namespace settle::order_service {

// The order's own saga steps, under their own barrier: the first step accepts the order (it
// must exist) and its compensation cancels it, so a saga that fails ends with the order
// "cancelled"; the last step, reached once stock and payment succeeded, completes it. Between
// them the order stays "pending". Thread-safe.
class OrderSteps {
 public:
  static constexpr const char* kAcceptPath = "/saga/order/accept";
  static constexpr const char* kCancelPath = "/saga/order/cancel";
  static constexpr const char* kCompletePath = "/saga/order/complete";

  OrderSteps(sdk::SqliteBarrierStore& store, const Clock& clock);

  void Register(sdk::Participant& participant);

 private:
  sdk::Barrier barrier_;
};

}  // namespace settle::order_service
