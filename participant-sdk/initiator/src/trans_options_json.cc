#include "trans_options_json.h"

namespace settle::sdk {

void AddTransOptions(const TransOptions& options, nlohmann::json& body) {
  if (options.wait_result) body["wait_result"] = true;
  if (options.timeout_to_fail) body["timeout_to_fail"] = options.timeout_to_fail->count();
  if (options.request_timeout) body["request_timeout"] = options.request_timeout->count();
  if (options.retry_interval) body["retry_interval"] = options.retry_interval->count();
  if (options.retry_limit > 0) body["retry_limit"] = options.retry_limit;
  if (!options.branch_headers.empty()) body["branch_headers"] = options.branch_headers;
}

}  // namespace settle::sdk
