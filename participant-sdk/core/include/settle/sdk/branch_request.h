#pragma once

#include <map>
#include <string>

#include "settle/core/protocol.h"
#include "settle/core/status.h"

namespace settle::sdk {

// One call of a participant's branch URL, as the coordinator (confirm, cancel, action,
// compensate) or the initiating client (try) makes it: docs/protocol.md §4.1 and §6.1.
struct BranchRequest {
  std::string path;  // the URL path the call arrived on
  std::string gid;
  TransType trans_type = TransType::kTcc;
  std::string branch_id;
  BranchOp op = BranchOp::kTry;
  std::string body;  // the branch data, byte for byte
  std::multimap<std::string, std::string> headers;
};

// What a branch handler answers. The SDK turns it into the protocol's answer with
// ToHttpAnswer (settle/core/http_status.h, docs/protocol.md §6.2): OK -> 200 SUCCESS (with
// `body` if set); Conflict, NotFound, AlreadyExists -> 409 FAILURE (the business said no: the
// transaction rolls back); Pending -> 425 ONGOING (ask again later); InvalidArgument -> 400,
// Unavailable -> 503, Internal -> 500, all three retried by the coordinator.
struct BranchReply {
  Status status;
  std::string body;  // optional JSON answer for OK; default {"dtm_result":"SUCCESS"}

  static BranchReply Success(std::string body = "") { return {Status::Ok(), std::move(body)}; }
  static BranchReply Failure(std::string why) { return {Status::Conflict(std::move(why)), ""}; }
  static BranchReply Ongoing(std::string why) { return {Status::Pending(std::move(why)), ""}; }
  static BranchReply Error(Status why) { return {std::move(why), ""}; }
};

// Reads gid, trans_type, branch_id and op from a branch URL's query parameters. The Node SDK
// sends branch_type instead of op for Try calls; it is accepted when op is absent.
// InvalidArgument naming the parameter when one is missing or invalid.
Status ParseBranchQuery(const std::multimap<std::string, std::string>& params,
                        BranchRequest& request);

}  // namespace settle::sdk
