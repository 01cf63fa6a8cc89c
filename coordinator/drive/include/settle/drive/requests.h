#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "settle/core/clock.h"
#include "settle/core/protocol.h"

namespace settle::coordinator {

// Branches one TCC may register (each is a confirm and a cancel row): bounds how large a
// client can make one transaction, which every pass loads whole.
inline constexpr std::size_t kMaxTccBranches = 1000;

// Transaction options as the client sent them. Absent means "not sent", which includes null
// and, for the durations, 0 (docs/protocol.md §3.7: 0 means "use the default").
struct RequestOptions {
  std::optional<Duration> timeout_to_fail;
  std::optional<Duration> request_timeout;
  std::optional<Duration> retry_interval;
  int retry_limit = 0;  // 0: unlimited
  std::map<std::string, std::string> branch_headers;
  bool concurrent = false;                 // top-level `concurrent` or custom_data's
  std::map<int, std::vector<int>> orders;  // from custom_data; validated against the steps
  std::string custom_data;                 // verbatim
  bool wait_result = false;
};

struct PrepareRequest {
  std::string gid;
  RequestOptions options;
};

struct RegisterBranchRequest {
  std::string gid;
  std::string branch_id;
  std::string data;  // forwarded byte for byte; empty: the branch is called with GET
  std::string confirm_url;
  std::string cancel_url;
};

struct SagaStep {
  std::string action_url;
  std::string compensate_url;  // empty: the step needs no compensation
  std::string payload;
};

struct SubmitRequest {
  std::string gid;
  TransType trans_type = TransType::kTcc;
  RequestOptions options;
  std::vector<SagaStep> steps;  // saga only
};

struct AbortRequest {
  std::string gid;
  std::string rollback_reason;
  bool wait_result = false;
};

}  // namespace settle::coordinator
