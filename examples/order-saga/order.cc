#include "order.h"

#include <nlohmann/json.hpp>

namespace settle::order_saga {

std::string ToJson(const Order& order) {
  return nlohmann::json{{"order_id", order.order_id},
                        {"item", order.item},
                        {"quantity", order.quantity},
                        {"amount", order.amount}}
      .dump();
}

Result<Order> ParseOrder(const std::string& body) {
  const auto j = nlohmann::json::parse(body, nullptr, false);
  if (!j.is_object()) return Status::Conflict("order: not a JSON object");
  Order order;
  for (const char* field : {"order_id", "item"}) {
    if (!j.contains(field) || !j[field].is_string() || j[field].get<std::string>().empty()) {
      return Status::Conflict(std::string(field) + ": must be a non-empty string");
    }
  }
  for (const char* field : {"quantity", "amount"}) {
    if (!j.contains(field) || !j[field].is_number_integer()) {
      return Status::Conflict(std::string(field) + ": must be an integer");
    }
  }
  // Whether a quantity or an amount makes business sense is each service's call.
  order.order_id = j["order_id"].get<std::string>();
  order.item = j["item"].get<std::string>();
  order.quantity = j["quantity"].get<std::int64_t>();
  order.amount = j["amount"].get<std::int64_t>();
  return order;
}

}  // namespace settle::order_saga
