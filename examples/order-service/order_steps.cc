#include "order_steps.h"

#include "order_table.h"

namespace settle::order_service {
namespace {

Status Accept(const sdk::BranchRequest& request, sdk::BarrierTransaction& tx) {
  auto order = FindOrderByGid(sdk::SqliteBarrierStore::Connection(tx), request.gid);
  if (!order) return order.status();
  if (!*order) return Status::Conflict("no order has gid " + request.gid);
  return Status::Ok();
}

sdk::GuardedBusiness MoveTo(const char* status) {
  return [status](const sdk::BranchRequest& request, sdk::BarrierTransaction& tx) {
    return SettleOrder(sdk::SqliteBarrierStore::Connection(tx), request.gid, status);
  };
}

}  // namespace

OrderSteps::OrderSteps(sdk::SqliteBarrierStore& store, const Clock& clock)
    : barrier_(store, clock) {}

void OrderSteps::Register(sdk::Participant& participant) {
  participant.OnAction(kAcceptPath, sdk::Guarded(barrier_, Accept))
      .OnCompensate(kCancelPath, sdk::Guarded(barrier_, MoveTo("cancelled")))
      .OnAction(kCompletePath, sdk::Guarded(barrier_, MoveTo("completed")));
}

}  // namespace settle::order_service
