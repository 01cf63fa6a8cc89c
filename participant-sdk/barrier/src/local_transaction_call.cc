#include "local_transaction_call.h"

#include <exception>

namespace settle::sdk {

Status StoreFailure(const Status& status, std::string_view doing) {
  const StatusCode code =
      status.code() == StatusCode::kInternal ? StatusCode::kInternal : StatusCode::kUnavailable;
  return Status(code, "barrier: " + std::string(doing) + ": " + status.message());
}

Status RunCaught(const std::function<Status(BarrierTransaction&)>& code, BarrierTransaction& tx,
                 std::string_view who) {
  try {
    return code(tx);
  } catch (const std::exception& e) {
    return Status::Internal(std::string(who) + " threw: " + e.what());
  } catch (...) {
    return Status::Internal(std::string(who) + " threw a non-standard exception");
  }
}

}  // namespace settle::sdk
