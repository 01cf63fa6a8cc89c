#pragma once

#include <cstdint>
#include <string>

#include "settle/core/clock.h"
#include "settle/sdk/barrier.h"
#include "settle/sdk/participant.h"
#include "settle/sdk/sqlite_barrier_store.h"

namespace settle::order_service {

// The inventory participant: its saga step reserves an order's quantity of its item (FAILURE
// when less is in stock, which rolls the saga back) and its compensation puts it back, each
// under the inventory's barrier, so that a repeated call, a compensation of a reservation that
// never ran and a reservation arriving after its compensation change nothing. Every item
// starts with `initial_stock` units, the first time an order asks for it. Thread-safe.
class Inventory {
 public:
  static constexpr const char* kReservePath = "/saga/inventory/reserve";
  static constexpr const char* kReleasePath = "/saga/inventory/release";

  Inventory(sdk::SqliteBarrierStore& store, const Clock& clock, std::int64_t initial_stock);

  static Status CreateTable(sqlite3* db);
  void Register(sdk::Participant& participant);

  // The units of `item` in stock now.
  Result<std::int64_t> Stock(const std::string& item);

 private:
  Status Reserve(const sdk::BranchRequest& request, sdk::BarrierTransaction& tx);
  Status Release(const sdk::BranchRequest& request, sdk::BarrierTransaction& tx);

  sdk::SqliteBarrierStore& store_;
  sdk::Barrier barrier_;
  const std::int64_t initial_stock_;
};

}  // namespace settle::order_service
