#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "call_log.h"
#include "inventory_service.h"
#include "order.h"
#include "order_service.h"
#include "payment_service.h"
#include "settle/sdk/client.h"
#include "settle/sdk/outcome.h"

namespace settle::order_saga {

struct ShopOptions {
  std::string data_dir;        // where order.db, inventory.db and payment.db live
  bool decline_cards = false;  // the payment service answers every charge "card declined"
  std::string item = "widget";
  std::int64_t initial_stock = 10;
  std::int64_t unit_price = 25;
};

// The three services of the order saga, each on its own free loopback port with its own
// database, and the saga that runs across them.
class Shop {
 public:
  static Result<std::unique_ptr<Shop>> Start(const ShopOptions& options, CallLog& log);

  // An order of `quantity` units of the shop's item. Its id is the saga's gid, so that the
  // coordinator's record and the services' rows name the same thing.
  Order NewOrder(std::string gid, std::int64_t quantity) const;

  // Submits the saga create order -> reserve stock -> charge payment, with `order` as every
  // step's payload, and waits for its outcome: succeed, or failed once every started step
  // (the failed one included) has been compensated in reverse order. Errors as Saga::Submit.
  Result<sdk::Outcome> PlaceOrder(sdk::Client& client, const Order& order);

  OrderService& orders() { return *orders_; }
  InventoryService& inventory() { return *inventory_; }
  PaymentService& payments() { return *payments_; }

 private:
  Shop() = default;

  ShopOptions options_;
  std::unique_ptr<OrderService> orders_;
  std::unique_ptr<InventoryService> inventory_;
  std::unique_ptr<PaymentService> payments_;
};

}  // namespace settle::order_saga
