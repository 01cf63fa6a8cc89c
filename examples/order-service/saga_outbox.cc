#include "saga_outbox.h"

#include <cstdio>

#include "inventory.h"
#include "order_steps.h"
#include "order_table.h"
#include "payments.h"
#include "settle/sdk/saga.h"
#include "sql.h"

namespace settle::order_service {
namespace {

// The coordinator's 409 for a saga that already ended (or is compensating): it was submitted.
bool AlreadyRan(const Status& s) {
  if (s.code() != StatusCode::kConflict) return false;
  for (const char* ended : {" is succeed", " is failed", " is aborting"}) {
    if (s.message().find(ended) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

SagaOutbox::SagaOutbox(sdk::SqliteBarrierStore& store, sdk::Client& client, std::string self_url,
                       Duration interval)
    : store_(store),
      client_(client),
      self_url_(std::move(self_url)),
      thread_(interval, [this] { SubmitAll().status().IgnoreError(); }) {}

SagaOutbox::~SagaOutbox() { Stop(); }

void SagaOutbox::Start() { thread_.Start(); }

void SagaOutbox::Stop() { thread_.Stop(); }

Status SagaOutbox::Submit(const std::string& gid) {
  auto orders =
      Read<std::vector<Order>>(store_, [&](sqlite3* db) { return OrdersToSubmit(db, gid); });
  if (!orders) return orders.status();
  for (const Order& order : *orders) {
    if (Status s = Submit(order); !s.ok()) return s;
  }
  return Status::Ok();
}

Result<std::size_t> SagaOutbox::SubmitAll() {
  auto orders = Read<std::vector<Order>>(store_, [](sqlite3* db) { return OrdersToSubmit(db); });
  if (!orders) return orders.status();
  std::size_t submitted = 0;
  for (const Order& order : *orders) {
    if (Status s = Submit(order); !s.ok()) return s;
    ++submitted;
  }
  return submitted;
}

Status SagaOutbox::Submit(const Order& order) {
  nlohmann::json payload = ToJson(order);
  payload.erase("status");
  const std::string body = payload.dump();
  sdk::Saga saga(client_, order.gid);
  saga.Add(self_url_ + OrderSteps::kAcceptPath, self_url_ + OrderSteps::kCancelPath, body)
      .Add(self_url_ + Inventory::kReservePath, self_url_ + Inventory::kReleasePath, body)
      .Add(self_url_ + Payments::kChargePath, self_url_ + Payments::kRefundPath, body)
      .Add(self_url_ + OrderSteps::kCompletePath, "", body);
  auto outcome = saga.Submit();
  if (!outcome && !AlreadyRan(outcome.status())) {
    std::printf("order-service: saga %s not submitted yet: %s\n", order.gid.c_str(),
                outcome.status().ToString().c_str());
    std::fflush(stdout);
    return outcome.status();
  }
  Status marked = Write(store_, [&](sqlite3* db) { return MarkSagaSubmitted(db, order.gid); });
  if (marked.ok()) {
    std::printf("order-service: saga %s submitted\n", order.gid.c_str());
    std::fflush(stdout);
  }
  return marked;
}

}  // namespace settle::order_service
