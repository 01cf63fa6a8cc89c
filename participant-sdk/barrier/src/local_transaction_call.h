#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "settle/core/status.h"
#include "settle/sdk/barrier_store.h"

namespace settle::sdk {

// Trouble with the participant's database is never the business's answer: whatever code the
// store used, it becomes Internal (kept) or Unavailable (everything else), an error the
// coordinator retries, never a Conflict or Pending that would decide a transaction.
// "barrier: <doing>: <the store's message>".
Status StoreFailure(const Status& status, std::string_view doing);

// Runs caller code inside a barrier transaction; an exception becomes Internal
// ("<who> threw: ..."), so that the transaction is rolled back like on any other error.
Status RunCaught(const std::function<Status(BarrierTransaction&)>& code, BarrierTransaction& tx,
                 std::string_view who);

}  // namespace settle::sdk
