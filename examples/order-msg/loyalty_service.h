#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "settle/core/clock.h"
#include "settle/sdk/barrier.h"
#include "settle/sdk/participant.h"
#include "settle/sdk/sqlite_barrier_store.h"

namespace settle::order_msg {

struct LoyaltyServiceOptions {
  std::string db_path;
  // A demo hook: the first delivery of each message is applied and committed, but answered
  // 503 as if the answer were lost, so that settled delivers it again and the barrier skips it.
  bool lose_first_answer = false;
};

// The loyalty service: POST /api/loyalty/AddPoints, a transactional message's step ({"customer",
// "points","order_id"}), adds points to the customer in its own SQLite file, guarded by the
// barrier so that a redelivery adds nothing; GET /api/loyalty/customers/<name> reads a balance
// ({"customer","points"}; 0 for a customer never credited). Prints one line per delivery.
class LoyaltyService {
 public:
  static Result<std::unique_ptr<LoyaltyService>> Open(LoyaltyServiceOptions options);
  ~LoyaltyService();

  Result<int> Start(const std::string& host, int port);
  void Stop();

 private:
  LoyaltyService(LoyaltyServiceOptions options, std::unique_ptr<sdk::SqliteBarrierStore> store);
  sdk::BranchReply AddPoints(const sdk::BranchRequest& request);
  sdk::HttpReply GetCustomer(const sdk::HttpRequest& request);

  LoyaltyServiceOptions options_;
  SystemClock clock_;
  std::unique_ptr<sdk::SqliteBarrierStore> store_;
  sdk::Barrier barrier_;
  // Last: stops before what its handlers use goes.
  sdk::Participant participant_;
};

}  // namespace settle::order_msg
