#include "initiator_calls.h"

#include <chrono>
#include <utility>

#include "settle/core/branch_result.h"
#include "settle/net/message.h"
#include "submit_outcome.h"
#include "trans_options_json.h"

namespace settle::sdk {
namespace {

using nlohmann::json;

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

Result<Outcome> Submit(Client& client, std::string_view trans_type, const std::string& gid,
                       const TransOptions& options) {
  json request = GlobalBody(gid, trans_type);
  if (options.wait_result) request["wait_result"] = true;
  return SubmitOutcome(gid, options.wait_result, client.Post("submit", DumpJson(request)));
}

Result<Outcome> Abort(Client& client, std::string_view trans_type, const std::string& gid,
                      const TransOptions& options, const std::string& reason) {
  json request = GlobalBody(gid, trans_type);
  request["rollback_reason"] = reason;
  if (options.wait_result) request["wait_result"] = true;
  auto answer = client.Post("abort", DumpJson(request));
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

json GlobalBody(const std::string& gid, std::string_view trans_type) {
  return {{"gid", gid}, {"trans_type", trans_type}};
}

std::string DumpJson(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

Status PrepareGlobal(Client& client, std::string_view trans_type, const std::string& gid,
                     const TransOptions& options) {
  json prepare = GlobalBody(gid, trans_type);
  AddTransOptions(options, prepare);
  auto prepared = client.Post("prepare", DumpJson(prepare));
  return prepared ? Status::Ok() : prepared.status();
}

Result<Outcome> FinishGlobal(Client& client, std::string_view trans_type, const std::string& gid,
                             const TransOptions& options, const Status& result) {
  if (result.ok()) return Submit(client, trans_type, gid, options);
  std::string reason =
      result.message().empty() ? std::string(StatusCodeName(result.code())) : result.message();
  return Abort(client, trans_type, gid, options, Truncate(reason, kMaxRollbackReasonBytes));
}

Result<std::string> CallOwnBranch(Client& client, const TransOptions& options,
                                  const std::string& call_url, const std::string& body,
                                  const std::string& branch_id, std::string_view op,
                                  const std::string& url) {
  const std::chrono::milliseconds timeout =
      options.request_timeout && options.request_timeout->count() > 0
          ? std::chrono::duration_cast<std::chrono::milliseconds>(*options.request_timeout)
          : client.options().timeout;
  // Like the coordinator's calls, the initiator's own carry the transaction's branch_headers.
  auto answer = client.CallUrl(call_url, body, timeout, options.branch_headers);
  const std::string name = "branch " + branch_id + " " + std::string(op);
  if (!answer) return Status::Unavailable(name + ": " + answer.status().message());
  const std::string detail = name + " " + url + " answered ";
  switch (ClassifyBranchResponse(answer->status, answer->body)) {
    case BranchResult::kSuccess:
      return std::move(answer->body);
    case BranchResult::kFailure:
      return Status::Conflict(detail +
                              "FAILURE: " + net::DescribeAnswer(answer->status, answer->body));
    case BranchResult::kOngoing:
      // The initiator does not wait for its own call: the transaction cannot go on without
      // its result.
      return Status::Unavailable(detail +
                                 "ONGOING: " + net::DescribeAnswer(answer->status, answer->body));
    case BranchResult::kUnknown:
      break;
  }
  return Status::Unavailable(detail + net::DescribeAnswer(answer->status, answer->body));
}

}  // namespace settle::sdk
