#include "call_log.h"

namespace settle::order_saga {

std::string Call::ToString() const {
  std::string line = service + ": " + verb + " " + detail + " -> ";
  switch (seen) {
    case sdk::BarrierCase::kEmptyRollback:
      return line + "SUCCESS (empty rollback: its action never ran, so there is nothing to undo)";
    case sdk::BarrierCase::kDuplicate:
      return line + "SUCCESS (duplicate: already done)";
    case sdk::BarrierCase::kHanging:
      return line + "FAILURE (arrived after its compensation)";
    case sdk::BarrierCase::kFirstCall:
      break;
  }
  if (status.ok()) return line + "SUCCESS";
  if (status.code() == StatusCode::kConflict) return line + "FAILURE " + status.message();
  return line + "ERROR " + status.ToString() + " (the coordinator retries)";
}

void CallLog::Record(Call call) {
  std::lock_guard lock(mu_);
  if (out_ != nullptr) {
    std::fprintf(out_, "%s\n", call.ToString().c_str());
    std::fflush(out_);
  }
  calls_.push_back(std::move(call));
}

std::vector<Call> CallLog::calls() const {
  std::lock_guard lock(mu_);
  return calls_;
}

}  // namespace settle::order_saga
