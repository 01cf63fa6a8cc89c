#pragma once

#include <sqlite3.h>

#include <optional>
#include <string>
#include <vector>

#include "order.h"
#include "settle/core/status.h"

namespace settle::order_service {

// The orders table, on a connection of the caller's transaction. Besides the order, a row
// keeps saga_submitted: 0 until the coordinator has accepted the order's saga, which makes the
// table the outbox of those submits (see SagaOutbox).
Status CreateOrderTable(sqlite3* db);

// Inserts a pending order, its saga not yet submitted. Conflict when its id exists.
Status InsertOrder(sqlite3* db, const Order& order);

// Every order, oldest first.
Result<std::vector<Order>> ListOrders(sqlite3* db);
Result<std::optional<Order>> FindOrder(sqlite3* db, const std::string& order_id);
Result<std::optional<Order>> FindOrderByGid(sqlite3* db, const std::string& gid);

// The orders whose saga is not submitted yet (all of them with an empty `gid`, else that one).
Result<std::vector<Order>> OrdersToSubmit(sqlite3* db, const std::string& gid = "");
Status MarkSagaSubmitted(sqlite3* db, const std::string& gid);

// Moves a pending order to `status` (completed, cancelled); an order in another status stays.
Status SettleOrder(sqlite3* db, const std::string& gid, const std::string& status);

}  // namespace settle::order_service
