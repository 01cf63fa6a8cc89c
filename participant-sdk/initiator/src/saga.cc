#include "settle/sdk/saga.h"

#include <utility>

#include <nlohmann/json.hpp>

#include "global_call_json.h"
#include "submit_outcome.h"

namespace settle::sdk {

using nlohmann::json;

Saga& Saga::Add(std::string action_url, std::string compensate_url, std::string payload) {
  steps_.push_back(Step{std::move(action_url), std::move(compensate_url), std::move(payload)});
  return *this;
}

Saga& Saga::EnableConcurrent() {
  concurrent_ = true;
  return *this;
}

Saga& Saga::AddOrder(int step, std::vector<int> waits_for) {
  orders_[step] = std::move(waits_for);
  concurrent_ = true;
  return *this;
}

Saga& Saga::SetOptions(TransOptions options) {
  options_ = std::move(options);
  return *this;
}

GlobalCall Saga::ToCall() const {
  GlobalCall call{.gid = gid_, .trans_type = "saga", .options = options_};
  for (const Step& step : steps_) {
    call.steps.push_back({{"action", step.action}, {"compensate", step.compensate}});
    call.payloads.push_back(step.payload);
  }
  if (concurrent_) {
    // As DTM's Go SDK sends it: a JSON string, with the step indexes of "orders" as keys.
    json orders = json::object();
    for (const auto& [step, waits] : orders_) orders[std::to_string(step)] = waits;
    const json custom = {{"concurrent", true}, {"orders", orders}};
    call.custom_data = custom.dump();
  }
  return call;
}

std::string Saga::ToJson() const { return GlobalCallJson(ToCall()); }

Result<Outcome> Saga::Submit() {
  if (steps_.empty()) return Status::InvalidArgument("steps: a saga needs at least one step");
  return SubmitOutcome(gid_, options_.wait_result, link_.Send(GlobalOp::kSubmit, ToCall()));
}

}  // namespace settle::sdk
