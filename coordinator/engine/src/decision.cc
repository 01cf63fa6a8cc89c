#include "settle/engine/decision.h"

#include "settle/engine/msg_engine.h"
#include "settle/engine/saga_engine.h"
#include "settle/engine/two_phase_engine.h"

namespace settle::coordinator {

Decision Decide(const storage::Transaction& tx, TimePoint now) {
  switch (tx.global.trans_type) {
    case TransType::kTcc:
      return DecideTcc(tx, now);
    case TransType::kSaga:
      return DecideSaga(tx, now);
    case TransType::kMsg:
      return DecideMsg(tx, now);
    case TransType::kXa:
      return DecideXa(tx, now);
  }
  return {};
}

void ApplyStatusChange(storage::GlobalRecord& global, GlobalStatus to, const std::string& reason,
                       TimePoint now) {
  global.status = to;
  global.update_time = now;
  if (to == GlobalStatus::kAborting) {
    global.rollback_time = now;
    if (!reason.empty()) global.rollback_reason = reason;
  }
  // A transaction failed without rolling back first (an operator's forceStop) keeps why.
  if (to == GlobalStatus::kFailed && global.rollback_reason.empty() && !reason.empty()) {
    global.rollback_reason = reason;
  }
  if (IsTerminal(to)) {
    global.finish_time = now;
    global.next_cron_time.reset();
    global.stuck = false;
  }
}

}  // namespace settle::coordinator
