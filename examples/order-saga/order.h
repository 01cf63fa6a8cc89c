#pragma once

#include <cstdint>
#include <string>

#include "settle/core/status.h"

namespace settle::order_saga {

// What a customer orders: the payload of every step of the order saga, so that each service,
// and its compensation, sees the whole order.
struct Order {
  std::string order_id;
  std::string item;
  std::int64_t quantity = 0;
  std::int64_t amount = 0;  // what the customer pays
};

// {"order_id":"...","item":"widget","quantity":2,"amount":50}
std::string ToJson(const Order& order);

// The order in a step's body. Conflict naming the field when the body is not an order: it
// will not become one on a retry, so the step fails rather than being retried for ever.
Result<Order> ParseOrder(const std::string& body);

}  // namespace settle::order_saga
