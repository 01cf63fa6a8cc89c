#include "dtm_request.h"

#include <nlohmann/json.hpp>

namespace settle::sdk {

Result<dtmgimp::DtmRequest> ToDtmRequest(const GlobalCall& call) {
  if (call.concurrent) {
    return Status::InvalidArgument(
        "concurrent: DTM's gRPC API has no member for a message delivered in parallel; send "
        "this message with the HTTP Client, or without EnableConcurrent");
  }
  dtmgimp::DtmRequest out;
  out.set_gid(call.gid);
  out.set_transtype(call.trans_type);
  const TransOptions& o = call.options;
  dtmgimp::DtmTransOptions& options = *out.mutable_transoptions();
  options.set_waitresult(o.wait_result);
  if (o.timeout_to_fail) options.set_timeouttofail(o.timeout_to_fail->count());
  if (o.retry_interval) options.set_retryinterval(o.retry_interval->count());
  if (o.request_timeout) options.set_requesttimeout(o.request_timeout->count());
  if (o.retry_limit > 0) options.set_retrylimit(o.retry_limit);
  for (const auto& [name, value] : o.branch_headers) {
    (*options.mutable_branchheaders())[name] = value;
  }
  out.set_customeddata(call.custom_data);
  if (!call.steps.empty()) {
    nlohmann::json steps = nlohmann::json::array();
    for (const auto& step : call.steps) steps.push_back(nlohmann::json(step));
    out.set_steps(steps.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
  for (const std::string& payload : call.payloads) out.add_binpayloads(payload);
  out.set_queryprepared(call.query_prepared);
  out.set_rollbackreason(call.rollback_reason);
  for (const auto& [name, value] : call.req_extra) (*out.mutable_reqextra())[name] = value;
  return out;
}

dtmgimp::DtmBranchRequest ToDtmBranchRequest(const BranchRegistration& branch) {
  dtmgimp::DtmBranchRequest out;
  out.set_gid(branch.gid);
  out.set_transtype(branch.trans_type);
  out.set_branchid(branch.branch_id);
  for (const auto& [name, url] : branch.urls) (*out.mutable_data())[name] = url;
  if (!branch.op.empty()) (*out.mutable_data())["op"] = branch.op;
  if (!branch.status.empty()) (*out.mutable_data())["status"] = branch.status;
  out.set_busipayload(branch.data);
  return out;
}

}  // namespace settle::sdk
