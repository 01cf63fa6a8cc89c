#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "settle/core/branch_result.h"
#include "settle/core/protocol.h"
#include "settle/core/status.h"
#include "settle/sdk/trans_options.h"

namespace settle::sdk {

// How much longer than a link's timeout a wait_result call may take to be answered: the
// coordinator holds the answer for at most one pass over the transaction, which it bounds by
// 30 s by default (past that it answers 425, over gRPC its status).
inline constexpr std::chrono::milliseconds kWaitResultAllowance{30'000};

// A branch row as /query shows it.
struct BranchInfo {
  std::string branch_id;
  BranchOp op = BranchOp::kConfirm;
  std::string url;
  BranchStatus status = BranchStatus::kPrepared;
  int attempts = 0;
  std::string last_error;
};

// A transaction as /query shows it.
struct TransactionInfo {
  std::string gid;
  TransType trans_type = TransType::kTcc;
  GlobalStatus status = GlobalStatus::kPrepared;
  std::string rollback_reason;
  bool stuck = false;
  std::vector<BranchInfo> branches;
};

// The calls that change a transaction (docs/protocol.md §3.3-3.6).
enum class GlobalOp { kPrepare, kSubmit, kAbort };

// One prepare, submit or abort in the protocol's own words, whichever wire carries it: the
// HTTP Client sends it as the JSON body of §3, the gRPC client as DTM's DtmRequest (§10.1).
// A member left empty is not sent.
struct GlobalCall {
  std::string gid;
  std::string trans_type;  // "saga", "tcc", "msg" or "xa"
  // Each option that is set is sent; unset ones are left to the coordinator's defaults.
  TransOptions options;
  // A saga's or message's steps: each step's URLs by name ("action", "compensate"), and the
  // bytes each step is called with, one per step.
  std::vector<std::map<std::string, std::string>> steps;
  std::vector<std::string> payloads;
  std::string custom_data;  // JSON text
  bool concurrent = false;  // a message's steps delivered in parallel
  std::string query_prepared;
  std::string rollback_reason;
  // A workflow's final submit (docs/protocol.md §3.16): status, rollback_reason and result
  // (base64).
  std::map<std::string, std::string> req_extra;
};

// One record of a workflow's step log, as prepareWorkflow answers it (§3.16): a step's action,
// its phase 2 (commit, rollback) or an XA step's business, how it ended, and its bytes.
struct StepProgress {
  std::string branch_id;
  std::string op;
  std::string status;  // "succeed" or "failed"
  std::string data;
};

// A workflow as prepareWorkflow answers it: its status, how it ended, and its step log.
struct WorkflowState {
  GlobalStatus status = GlobalStatus::kPrepared;
  std::string rollback_reason;
  std::string result;  // bytes
  std::vector<StepProgress> progresses;
};

// A branch the initiator registers (a TCC's): its bytes and its URLs by name ("confirm",
// "cancel", and "try" for settled's countersignature of the Try; an XA's "url"), §3.4.
struct BranchRegistration {
  std::string gid;
  std::string trans_type;
  std::string branch_id;
  std::string data;
  std::map<std::string, std::string> urls;
  // The transaction's TransOptions::traceparent and tracestate, sent as TransOptions says.
  std::string traceparent;
  std::string tracestate;
  // A workflow's step record (§3.16): its op and how it ended; empty for other types.
  std::string op;
  std::string status;
};

// What a registration answered: settled's countersignature of the branch's Try (§4.9), when
// it signs and the registration named the Try: the fields to send with the Try, as
// OwnBranchCall::signature. Empty otherwise (and from coordinators that do not countersign).
struct RegisteredBranch {
  std::vector<std::pair<std::string, std::string>> try_signature;
};

// A branch the initiator calls itself: a TCC's Try, an XA branch's action. The protocol's
// words (gid, trans_type, branch_id, op and `extra`, XA's phase2_url) travel as the URL's
// query over HTTP and as dtm-* metadata over gRPC.
struct OwnBranchCall {
  std::string url;
  std::string gid;
  std::string trans_type;
  std::string branch_id;
  std::string op;
  std::vector<std::pair<std::string, std::string>> extra;
  std::string body;  // bytes; over HTTP an empty body is a GET
  std::chrono::milliseconds timeout{0};
  // The transaction's branch_headers, and its trace context (TransOptions::traceparent).
  std::map<std::string, std::string> headers;
  // settled's countersignature of this Try (RegisteredBranch::try_signature): sent as header
  // fields (gRPC: metadata) as given, and the call then built exactly as settled signed it
  // (over gRPC without dtm-dtm). A link with a signing key of its own signs instead.
  std::vector<std::pair<std::string, std::string>> signature;
};

// What the branch answered, classified as the coordinator classifies it (§4.2, §10.4), and
// described for messages ("HTTP 409: ..." or "ABORTED: ...").
struct BranchAnswer {
  BranchResult result = BranchResult::kUnknown;
  std::string body;
  std::string description;
};

// A connection to a coordinator as the initiators use it (Saga, Msg, RunTcc, RunXa): the HTTP
// Client (client.h) or the gRPC client (grpc_client.h, in settle_sdk_grpc_client).
//
// Errors from Send and RegisterBranch: Conflict for FAILURE, Pending for ONGOING;
// InvalidArgument when the coordinator refused the request as malformed or its credentials;
// Unavailable when it could not be reached, timed out or answered anything else. Messages carry
// the coordinator's own.
class CoordinatorLink {
 public:
  virtual ~CoordinatorLink() = default;

  virtual Result<std::string> NewGid() = 0;
  // nullopt for an unknown gid.
  virtual Result<std::optional<TransactionInfo>> Query(const std::string& gid) = 0;
  // The answer's body on SUCCESS (empty over gRPC).
  virtual Result<std::string> Send(GlobalOp op, const GlobalCall& call) = 0;
  virtual Result<RegisteredBranch> RegisterBranch(const BranchRegistration& branch) = 0;
  // prepareWorkflow (§3.16): the workflow stored prepared, or as it is stored. A link that
  // does not start workflows answers InvalidArgument saying so.
  virtual Result<WorkflowState> PrepareWorkflow(const GlobalCall& call) {
    return Status::InvalidArgument("this coordinator link does not start workflows (" + call.gid +
                                   ")");
  }

  // Whether this link can call `url` itself (CallBranch): InvalidArgument saying why not.
  virtual Status CheckOwnBranchUrl(const std::string& url) const = 0;
  // The branch's answer, or Unavailable when none came within call.timeout; InvalidArgument
  // for a URL CheckOwnBranchUrl refuses or headers that cannot be sent.
  virtual Result<BranchAnswer> CallBranch(const OwnBranchCall& call) = 0;

  // How long a call may take when the transaction sets no request_timeout.
  virtual std::chrono::milliseconds timeout() const = 0;
};

}  // namespace settle::sdk
