#include "transfer_request.h"

#include <nlohmann/json.hpp>

namespace settle::bank {

Result<TransferRequest> ParseTransferRequest(std::string_view body) {
  const auto json = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) {
    return Status::InvalidArgument(R"(body: must be a JSON object {"account_id":"1","amount":N})");
  }
  TransferRequest request;
  const auto account = json.find("account_id");
  if (account == json.end() || !account->is_string() ||
      account->get_ref<const std::string&>().empty()) {
    return Status::InvalidArgument("account_id: must be a non-empty string");
  }
  request.account_id = account->get<std::string>();

  // nlohmann keeps non-negative integers unsigned and negative ones signed; floats, strings
  // and booleans are neither, so "30", 30.0 and true are refused here.
  const auto amount = json.find("amount");
  if (amount == json.end() || !amount->is_number_integer()) {
    return Status::InvalidArgument("amount: must be a positive integer");
  }
  if (!amount->is_number_unsigned() || amount->get<std::uint64_t>() == 0) {
    return Status::InvalidArgument("amount: must be a positive integer");
  }
  if (amount->get<std::uint64_t>() > static_cast<std::uint64_t>(kMaxAmount)) {
    return Status::InvalidArgument("amount: must be at most " + std::to_string(kMaxAmount));
  }
  request.amount = static_cast<std::int64_t>(amount->get<std::uint64_t>());
  return request;
}

}  // namespace settle::bank
