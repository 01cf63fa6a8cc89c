#include "initiator_calls.h"

#include <chrono>
#include <utility>

#include "settle/core/ascii.h"
#include "settle/core/branch_result.h"
#include "settle/core/trace_context.h"
#include "submit_outcome.h"

namespace settle::sdk {
namespace {

// The coordinator refuses a rollback_reason over 1024 bytes; the start of a long error says
// enough.
constexpr std::size_t kMaxRollbackReasonBytes = 1000;

// At most `max` bytes of `text`, not cutting a UTF-8 sequence in two.
std::string Truncate(const std::string& text, std::size_t max) {
  if (text.size() <= max) return text;
  std::size_t end = max;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end);
}

Result<Outcome> Submit(CoordinatorLink& link, std::string_view trans_type, const std::string& gid,
                       const TransOptions& options) {
  GlobalCall call;
  call.gid = gid;
  call.trans_type = trans_type;
  call.options.wait_result = options.wait_result;
  call.options.traceparent = options.traceparent;
  call.options.tracestate = options.tracestate;
  return SubmitOutcome(gid, options.wait_result, link.Send(GlobalOp::kSubmit, call));
}

Result<Outcome> Abort(CoordinatorLink& link, std::string_view trans_type, const std::string& gid,
                      const TransOptions& options, const std::string& reason) {
  GlobalCall call;
  call.gid = gid;
  call.trans_type = trans_type;
  call.options.wait_result = options.wait_result;
  call.options.traceparent = options.traceparent;
  call.options.tracestate = options.tracestate;
  call.rollback_reason = reason;
  auto answer = link.Send(GlobalOp::kAbort, call);
  // Settle answers a completed wait_result abort with 409 (below); a 200 there comes from a
  // server that reports the pass itself as the success.
  if (answer) {
    return Outcome{gid, options.wait_result ? GlobalStatus::kFailed : GlobalStatus::kAborting,
                   reason};
  }
  const Status& s = answer.status();
  // A wait_result abort that completed its rollbacks answers 409 "failed" with the stored
  // reason: that is the success of an abort.
  if (s.code() == StatusCode::kConflict && options.wait_result) {
    return Outcome{gid, GlobalStatus::kFailed, s.message().empty() ? reason : s.message()};
  }
  if (s.code() == StatusCode::kPending) return Outcome{gid, GlobalStatus::kAborting, reason};
  return s;
}

}  // namespace

Status PrepareGlobal(CoordinatorLink& link, std::string_view trans_type, const std::string& gid,
                     const TransOptions& options) {
  const GlobalCall call{.gid = gid, .trans_type = std::string(trans_type), .options = options};
  auto prepared = link.Send(GlobalOp::kPrepare, call);
  return prepared ? Status::Ok() : prepared.status();
}

Result<Outcome> FinishGlobal(CoordinatorLink& link, std::string_view trans_type,
                             const std::string& gid, const TransOptions& options,
                             const Status& result) {
  if (result.ok()) return Submit(link, trans_type, gid, options);
  std::string reason =
      result.message().empty() ? std::string(StatusCodeName(result.code())) : result.message();
  return Abort(link, trans_type, gid, options, Truncate(reason, kMaxRollbackReasonBytes));
}

Result<std::string> CallOwnBranch(CoordinatorLink& link, const TransOptions& options,
                                  OwnBranchCall call) {
  call.timeout =
      options.request_timeout && options.request_timeout->count() > 0
          ? std::chrono::duration_cast<std::chrono::milliseconds>(*options.request_timeout)
          : link.timeout();
  // Like the coordinator's calls, the initiator's own carry the transaction's branch_headers,
  // and the caller's trace context in place of any of theirs of the same name: the caller's
  // span is this call's parent.
  call.headers = options.branch_headers;
  const auto trace = TraceFields(options.traceparent, options.tracestate);
  if (!trace.empty()) {
    std::erase_if(call.headers, [](const auto& header) {
      return EqualsIgnoreAsciiCase(header.first, kTraceparentHeader) ||
             EqualsIgnoreAsciiCase(header.first, kTracestateHeader);
    });
    call.headers.insert(trace.begin(), trace.end());
  }
  auto answer = link.CallBranch(call);
  const std::string name = "branch " + call.branch_id + " " + call.op;
  if (!answer) return Status::Unavailable(name + ": " + answer.status().message());
  const std::string detail = name + " " + call.url + " answered ";
  switch (answer->result) {
    case BranchResult::kSuccess:
      return std::move(answer->body);
    case BranchResult::kFailure:
      return Status::Conflict(detail + "FAILURE: " + answer->description);
    case BranchResult::kOngoing:
      // The initiator does not wait for its own call: the transaction cannot go on without
      // its result.
      return Status::Unavailable(detail + "ONGOING: " + answer->description);
    case BranchResult::kUnknown:
      break;
  }
  return Status::Unavailable(detail + answer->description);
}

}  // namespace settle::sdk
