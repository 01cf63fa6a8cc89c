#include "global_call_json.h"

namespace settle::sdk {
namespace {

using nlohmann::json;

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace

void AddTransOptions(const TransOptions& options, json& body) {
  if (options.wait_result) body["wait_result"] = true;
  if (options.timeout_to_fail) body["timeout_to_fail"] = options.timeout_to_fail->count();
  if (options.request_timeout) body["request_timeout"] = options.request_timeout->count();
  if (options.retry_interval) body["retry_interval"] = options.retry_interval->count();
  if (options.retry_limit > 0) body["retry_limit"] = options.retry_limit;
  if (!options.branch_headers.empty()) body["branch_headers"] = options.branch_headers;
}

std::string GlobalCallJson(const GlobalCall& call) {
  json body = {{"gid", call.gid}, {"trans_type", call.trans_type}};
  if (!call.steps.empty()) {
    json steps = json::array();
    for (const auto& step : call.steps) steps.push_back(json(step));
    body["steps"] = std::move(steps);
    body["payloads"] = call.payloads;
  }
  AddTransOptions(call.options, body);
  if (!call.custom_data.empty()) body["custom_data"] = call.custom_data;
  if (call.concurrent) body["concurrent"] = true;
  if (!call.query_prepared.empty()) body["query_prepared"] = call.query_prepared;
  if (!call.rollback_reason.empty()) body["rollback_reason"] = call.rollback_reason;
  if (!call.req_extra.empty()) body["req_extra"] = call.req_extra;
  return Dump(body);
}

std::string RegistrationJson(const BranchRegistration& branch) {
  json body = {{"gid", branch.gid},
               {"trans_type", branch.trans_type},
               {"branch_id", branch.branch_id},
               {"data", branch.data}};
  for (const auto& [name, url] : branch.urls) body[name] = url;
  if (!branch.op.empty()) body["op"] = branch.op;
  if (!branch.status.empty()) body["status"] = branch.status;
  return Dump(body);
}

}  // namespace settle::sdk
