#pragma once

#include <string>
#include <string_view>

#include "settle/core/status.h"

namespace settle::sdk {

// Trouble with the participant's database is never the business's answer: whatever code the
// store used, it becomes Internal (kept) or Unavailable (everything else), an error the
// coordinator retries, never a Conflict or Pending that would decide a transaction.
// "barrier: <doing>: <the store's message>".
Status StoreFailure(const Status& status, std::string_view doing);

}  // namespace settle::sdk
