#include "settle/engine/new_records.h"

#include "settle/engine/type_rules.h"

namespace settle::engine {

storage::TransOptions ResolveOptions(const RequestOptions& requested, TransType type,
                                     const TransactionDefaults& defaults) {
  storage::TransOptions options;
  options.request_timeout = requested.request_timeout.value_or(defaults.request_timeout);
  options.retry_interval = requested.retry_interval.value_or(defaults.retry_interval);
  options.timeout_to_fail = requested.timeout_to_fail.value_or(
      RulesOf(type).default_deadline ? defaults.prepared_timeout_to_fail : Duration(0));
  options.delay = requested.delay.value_or(Duration(0));
  options.pause_after = requested.pause_after;
  options.retry_limit = requested.retry_limit;
  options.branch_headers = requested.branch_headers;
  options.concurrent = requested.concurrent;
  if (requested.concurrent) options.orders = requested.orders;
  options.custom_data = requested.custom_data;
  options.workflow_name = requested.workflow_name;
  return options;
}

storage::GlobalRecord NewGlobal(const std::string& gid, TransType type, GlobalStatus status,
                                const RequestOptions& options, const TransactionDefaults& defaults,
                                TimePoint now) {
  storage::GlobalRecord g;
  g.gid = gid;
  g.trans_type = type;
  g.status = status;
  g.options = ResolveOptions(options, type, defaults);
  g.create_time = now;
  g.update_time = now;
  g.next_cron_time = now;
  return g;
}

storage::BranchRecord NewBranchRow(const std::string& gid, std::string branch_id, BranchOp op,
                                   int seq, std::string url, SharedBytes data, TimePoint now) {
  storage::BranchRecord row;
  row.gid = gid;
  row.branch_id = std::move(branch_id);
  row.op = op;
  row.seq = seq;
  row.url = std::move(url);
  row.data = std::move(data);
  row.create_time = now;
  row.update_time = now;
  row.next_retry_at = now;
  return row;
}

}  // namespace settle::engine
