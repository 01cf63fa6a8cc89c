#pragma once

#include <vector>

#include "settle/async/asio.h"
#include "settle/engine/branch_call.h"

namespace settle::calls {

// Makes branch calls. The seam where tests script participants' answers.
//
// Thread-safety: CallAll may be called from many coroutines at once.
class BranchCaller {
 public:
  virtual ~BranchCaller() = default;

  // Makes every call, concurrently, and returns their outcomes in the same order once every
  // call has one. Never throws; every failure is an outcome.
  virtual asio::awaitable<std::vector<engine::BranchOutcome>> CallAll(
      std::vector<engine::BranchCall> calls) = 0;
};

}  // namespace settle::calls
