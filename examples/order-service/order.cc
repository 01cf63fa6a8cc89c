#include "order.h"

#include <openssl/evp.h>

#include <array>

#include "settle/sdk/request_fingerprint.h"

namespace settle::order_service {

using nlohmann::json;

Result<OrderRequest> ParseOrderRequest(const std::string& body) {
  const json j = json::parse(body, nullptr, false);
  if (j.is_discarded()) return Status::InvalidArgument("body: not valid JSON");
  if (!j.is_object()) return Status::InvalidArgument("body: must be a JSON object");
  if (!j.contains("item")) return Status::InvalidArgument("item: required");
  const json& item = j["item"];
  if (!item.is_string() || item.get<std::string>().empty() || item.get<std::string>().size() > 100)
    return Status::InvalidArgument("item: must be a string of 1 to 100 characters");
  if (!j.contains("quantity")) return Status::InvalidArgument("quantity: required");
  const json& quantity = j["quantity"];
  if (!quantity.is_number_integer() || quantity.get<std::int64_t>() < 1 ||
      quantity.get<std::int64_t>() > kMaxQuantity) {
    return Status::InvalidArgument("quantity: must be an integer from 1 to " +
                                   std::to_string(kMaxQuantity));
  }
  return OrderRequest{item.get<std::string>(), quantity.get<std::int64_t>()};
}

OrderIds IdsForKey(std::string_view idempotency_key) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  EVP_Digest(idempotency_key.data(), idempotency_key.size(), digest.data(), &size, EVP_sha256(),
             nullptr);
  const std::string hex = sdk::HexDigits(digest.data(), size);
  return OrderIds{hex.substr(0, 16), "order-" + hex.substr(0, 32)};
}

json ToJson(const Order& order) {
  return {{"order_id", order.order_id}, {"gid", order.gid},       {"item", order.item},
          {"quantity", order.quantity}, {"amount", order.amount}, {"status", order.status}};
}

Result<Order> OrderFromJson(const std::string& payload) {
  const json j = json::parse(payload, nullptr, false);
  Order order;
  try {
    order.order_id = j.at("order_id").get<std::string>();
    order.gid = j.at("gid").get<std::string>();
    order.item = j.at("item").get<std::string>();
    order.quantity = j.at("quantity").get<std::int64_t>();
    order.amount = j.at("amount").get<std::int64_t>();
  } catch (const json::exception& e) {
    return Status::InvalidArgument(std::string("not an order: ") + e.what());
  }
  return order;
}

}  // namespace settle::order_service
