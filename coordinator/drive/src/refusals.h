#pragma once

#include <string>

#include "settle/core/status.h"

namespace settle::drive {

// What an operation on an unknown gid answers (NotFound), the same wherever it is refused.
inline Status NoSuchGid(const std::string& gid) {
  return Status::NotFound("no transaction with gid " + gid);
}

}  // namespace settle::drive
