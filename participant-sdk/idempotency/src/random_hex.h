#pragma once

#include <cstddef>
#include <string>

#include "settle/core/status.h"

namespace settle::sdk {

// `bytes` random bytes from OpenSSL's generator, as lowercase hex digits: unguessable names
// such as an idempotency claim's owner or an issued token. Unavailable if the generator fails
// (it could not seed itself): nothing guessable is handed out instead.
Result<std::string> RandomHex(std::size_t bytes);

}  // namespace settle::sdk
