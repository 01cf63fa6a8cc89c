#pragma once

#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "settle/sdk/barrier.h"
#include "settle/sdk/branch_request.h"

namespace settle::order_saga {

// One branch call a service received, and what it answered.
struct Call {
  std::string service;  // "order", "inventory", "payment"
  std::string verb;     // "create", "cancel", "reserve", ...
  std::string detail;   // "order=... item=widget qty=2"
  sdk::BarrierCase seen = sdk::BarrierCase::kFirstCall;
  Status status;  // the handler's answer: OK, Conflict (FAILURE) or an error (retried)

  // "inventory: reserve order=... item=widget qty=2 -> SUCCESS"
  std::string ToString() const;
};

// The calls the services received, in the order they answered them; each is also printed to
// `out` (if not null) as it happens, so that a reader watches the saga run. Thread-safe: the
// services answer on their own threads.
class CallLog {
 public:
  explicit CallLog(std::FILE* out = nullptr) : out_(out) {}

  void Record(Call call);
  std::vector<Call> calls() const;

 private:
  std::FILE* out_;
  mutable std::mutex mu_;
  std::vector<Call> calls_;
};

}  // namespace settle::order_saga
