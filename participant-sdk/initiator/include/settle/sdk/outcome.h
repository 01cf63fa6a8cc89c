#pragma once

#include <string>

#include "settle/core/protocol.h"

namespace settle::sdk {

// Where a transaction stood when the coordinator answered the client's last call.
struct Outcome {
  std::string gid;
  // submitted (TCC submit or saga accepted; the coordinator finishes it), succeed (wait_result
  // saw it finish), aborting or failed (rolled back).
  GlobalStatus status = GlobalStatus::kSubmitted;
  // Why it was rolled back, or why the coordinator could not say more (wait_result: still
  // running).
  std::string reason;

  bool committed() const {
    return status == GlobalStatus::kSubmitted || status == GlobalStatus::kSucceed;
  }
};

}  // namespace settle::sdk
