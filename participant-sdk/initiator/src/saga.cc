#include "settle/sdk/saga.h"

#include <utility>

#include <nlohmann/json.hpp>

#include "submit_outcome.h"
#include "trans_options_json.h"

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

std::string Saga::ToJson() const {
  json steps = json::array();
  json payloads = json::array();
  for (const Step& step : steps_) {
    steps.push_back(json{{"action", step.action}, {"compensate", step.compensate}});
    payloads.push_back(step.payload);
  }
  json body = {{"gid", gid_}, {"trans_type", "saga"}, {"steps", steps}, {"payloads", payloads}};
  AddTransOptions(options_, body);
  if (concurrent_) {
    // As DTM's Go SDK sends it: a JSON string, with the step indexes of "orders" as keys.
    json orders = json::object();
    for (const auto& [step, waits] : orders_) orders[std::to_string(step)] = waits;
    const json custom = {{"concurrent", true}, {"orders", orders}};
    body["custom_data"] = custom.dump();
  }
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

Result<Outcome> Saga::Submit() {
  if (steps_.empty()) return Status::InvalidArgument("steps: a saga needs at least one step");
  return SubmitOutcome(gid_, options_.wait_result, client_.Post("submit", ToJson()));
}

}  // namespace settle::sdk
