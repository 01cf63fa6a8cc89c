#include "shop.h"

#include <filesystem>

#include "settle/sdk/saga.h"

namespace settle::order_saga {

Result<std::unique_ptr<Shop>> Shop::Start(const ShopOptions& options, CallLog& log) {
  const std::filesystem::path dir = options.data_dir;
  std::unique_ptr<Shop> shop(new Shop());
  shop->options_ = options;
  auto orders = OrderService::Open(dir / "order.db", log);
  if (!orders) return orders.status();
  shop->orders_ = std::move(*orders);
  auto inventory =
      InventoryService::Open(dir / "inventory.db", options.item, options.initial_stock, log);
  if (!inventory) return inventory.status();
  shop->inventory_ = std::move(*inventory);
  auto payments = PaymentService::Open(dir / "payment.db", options.decline_cards, log);
  if (!payments) return payments.status();
  shop->payments_ = std::move(*payments);

  for (Service* service :
       {&shop->orders().service(), &shop->inventory().service(), &shop->payments().service()}) {
    if (Status s = service->Start(); !s.ok()) return s;
  }
  return shop;
}

Order Shop::NewOrder(std::string gid, std::int64_t quantity) const {
  return Order{std::move(gid), options_.item, quantity, quantity * options_.unit_price};
}

Result<sdk::Outcome> Shop::PlaceOrder(sdk::Client& client, const Order& order) {
  const std::string payload = ToJson(order);
  sdk::Saga saga(client, order.order_id);
  saga.Add(orders_->CreateUrl(), orders_->CancelUrl(), payload)
      .Add(inventory_->ReserveUrl(), inventory_->ReleaseUrl(), payload)
      .Add(payments_->ChargeUrl(), payments_->RefundUrl(), payload);
  // The answer comes once the coordinator has run the saga (or compensated it), so the
  // services' state can be shown right after.
  saga.options().wait_result = true;
  return saga.Submit();
}

}  // namespace settle::order_saga
