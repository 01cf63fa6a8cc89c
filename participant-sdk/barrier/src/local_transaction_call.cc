#include "local_transaction_call.h"

namespace settle::sdk {

Status StoreFailure(const Status& status, std::string_view doing) {
  const StatusCode code =
      status.code() == StatusCode::kInternal ? StatusCode::kInternal : StatusCode::kUnavailable;
  return Status(code, "barrier: " + std::string(doing) + ": " + status.message());
}

}  // namespace settle::sdk
