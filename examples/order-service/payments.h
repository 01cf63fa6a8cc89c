#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "settle/core/clock.h"
#include "settle/sdk/barrier.h"
#include "settle/sdk/participant.h"
#include "settle/sdk/sqlite_barrier_store.h"

namespace settle::order_service {

// The payment participant: its saga step charges an order's amount (one payment row per
// saga, status "charged") and its compensation refunds it (status "refunded"), each under the
// payment's barrier, like Inventory's. Thread-safe.
class Payments {
 public:
  static constexpr const char* kChargePath = "/saga/payment/charge";
  static constexpr const char* kRefundPath = "/saga/payment/refund";

  Payments(sdk::SqliteBarrierStore& store, const Clock& clock);

  static Status CreateTable(sqlite3* db);
  void Register(sdk::Participant& participant);

  // Every payment, oldest first: [{"gid","order_id","amount","status"}].
  Result<nlohmann::json> List();

 private:
  Status Charge(const sdk::BranchRequest& request, sdk::BarrierTransaction& tx);
  Status Refund(const sdk::BranchRequest& request, sdk::BarrierTransaction& tx);

  sdk::SqliteBarrierStore& store_;
  sdk::Barrier barrier_;
};

}  // namespace settle::order_service
