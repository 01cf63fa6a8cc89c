#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "settle/core/status.h"

namespace settle::order_service {

inline constexpr std::int64_t kUnitPrice = 25;  // what one unit of any item costs
inline constexpr std::int64_t kMaxQuantity = 1000;

// The body of POST /orders: {"item": string, "quantity": integer 1..1000}; other members are
// ignored.
struct OrderRequest {
  std::string item;
  std::int64_t quantity = 0;
};

// InvalidArgument naming what is wrong: "body: ...", "item: ..." or "quantity: ...".
Result<OrderRequest> ParseOrderRequest(const std::string& body);

// An order's ids follow from its Idempotency-Key alone (SHA-256 of the key), so that every
// retry of a request, in this process or after a restart, names the same order and the same
// saga: the coordinator then sees one gid however often the saga is submitted.
struct OrderIds {
  std::string order_id;  // 16 hex digits
  std::string gid;       // "order-" and 32 hex digits
};
OrderIds IdsForKey(std::string_view idempotency_key);

// An order as the orders table keeps it, GET /orders lists it and the saga steps receive it.
struct Order {
  std::string order_id;
  std::string gid;
  std::string item;
  std::int64_t quantity = 0;
  std::int64_t amount = 0;  // quantity * kUnitPrice
  std::string status;       // pending, completed or cancelled
};

nlohmann::json ToJson(const Order& order);
// A saga step's payload (ToJson of the order); InvalidArgument when it is not one.
Result<Order> OrderFromJson(const std::string& payload);

}  // namespace settle::order_service
