#include "settle/grpc_api/grpc_status.h"

#include <array>
#include <utility>

#include "settle/core/grpc_codes.h"

namespace settle::grpc_api {
namespace {

// The JSON name of a request's first path element, and the proto's.
constexpr std::array<std::pair<std::string_view, std::string_view>, 22> kProtoNames = {{
    {"gid", "Gid"},
    {"trans_type", "TransType"},
    {"steps", "Steps"},
    {"payloads", "BinPayloads"},
    {"query_prepared", "QueryPrepared"},
    {"custom_data", "CustomedData"},
    {"rollback_reason", "RollbackReason"},
    {"wait_result", "TransOptions.WaitResult"},
    {"timeout_to_fail", "TransOptions.TimeoutToFail"},
    {"request_timeout", "TransOptions.RequestTimeout"},
    {"retry_interval", "TransOptions.RetryInterval"},
    {"retry_limit", "TransOptions.RetryLimit"},
    {"branch_headers", "TransOptions.BranchHeaders"},
    {"branch_id", "BranchID"},
    {"data", "BusiPayload"},
    {"confirm", "Data.confirm"},
    {"cancel", "Data.cancel"},
    {"topic", "Topic"},
    {"remark", "Remark"},
    {"op", "Data.op"},          // a workflow step's
    {"status", "Data.status"},  // a workflow step's
    {"req_extra", "ReqExtra"},  // a workflow's submit
}};

}  // namespace

std::string InProtoNames(std::string_view message, std::string_view url_name) {
  const std::size_t colon = message.find(": ");
  if (colon == std::string_view::npos) return std::string(message);
  const std::string_view path = message.substr(0, colon);
  const std::size_t head_end = path.find_first_of(".[");
  const std::string_view head = path.substr(0, head_end);
  for (const auto& [json_name, proto_name] : kProtoNames) {
    if (head == json_name) {
      return std::string(proto_name) + std::string(message.substr(head.size()));
    }
  }
  if (head == "url") return std::string(url_name) + std::string(message.substr(head.size()));
  return std::string(message);
}

grpc::Status ToGrpcStatus(const Status& status, std::string_view url_name) {
  if (status.ok()) return grpc::Status::OK;
  const auto code = static_cast<grpc::StatusCode>(GrpcCodeOf(status.code()));
  if (status.code() == StatusCode::kInvalidArgument) {
    return {code, InProtoNames(status.message(), url_name)};
  }
  return {code, status.message()};
}

}  // namespace settle::grpc_api
