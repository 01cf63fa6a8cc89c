#include "settle/sdk/tcc.h"

#include <exception>
#include <utility>

#include <nlohmann/json.hpp>

#include "settle/core/branch_result.h"
#include "settle/core/protocol.h"
#include "settle/net/message.h"
#include "settle/net/url.h"
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

json TccBody(const std::string& gid) { return {{"gid", gid}, {"trans_type", "tcc"}}; }

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// What the closure's failure becomes: an error that RunTcc turns into an abort.
Status RunClosure(const std::function<Status(Tcc&)>& body, Tcc& tcc) {
  try {
    return body(tcc);
  } catch (const std::exception& e) {
    return Status::Internal(std::string("the TCC body threw: ") + e.what());
  } catch (...) {
    return Status::Internal("the TCC body threw an exception that is not a std::exception");
  }
}

Result<Outcome> Submit(Client& client, const std::string& gid, const TransOptions& options) {
  json request = TccBody(gid);
  if (options.wait_result) request["wait_result"] = true;
  return SubmitOutcome(gid, options.wait_result, client.Post("submit", Dump(request)));
}

Result<Outcome> Abort(Client& client, const std::string& gid, const TransOptions& options,
                      const std::string& reason) {
  json request = TccBody(gid);
  request["rollback_reason"] = reason;
  if (options.wait_result) request["wait_result"] = true;
  auto answer = client.Post("abort", Dump(request));
  // Settle answers a completed wait_result abort with 409 (below); a 200 there comes from a
  // server that reports the pass itself as the success.
  if (answer) {
    return Outcome{gid, options.wait_result ? GlobalStatus::kFailed : GlobalStatus::kAborting,
                   reason};
  }
  const Status& s = answer.status();
  // A wait_result abort that completed its cancels answers 409 "failed" with the stored
  // reason: that is the success of an abort.
  if (s.code() == StatusCode::kConflict && options.wait_result) {
    return Outcome{gid, GlobalStatus::kFailed, s.message().empty() ? reason : s.message()};
  }
  if (s.code() == StatusCode::kPending) return Outcome{gid, GlobalStatus::kAborting, reason};
  return s;
}

// The Try URL with the query parameters of docs/protocol.md §3.4 and §6.1, as an absolute URL
// again.
std::string TryCallUrl(const net::Url& url, const std::string& gid, const std::string& branch_id) {
  return (url.tls ? "https://" : "http://") + url.HostPort() +
         url.TargetWith({{"gid", gid},
                         {"trans_type", ToString(TransType::kTcc)},
                         {"branch_id", branch_id},
                         {"op", ToString(BranchOp::kTry)}});
}

}  // namespace

Result<std::string> Tcc::CallBranch(const std::string& body, const std::string& try_url,
                                    const std::string& confirm_url, const std::string& cancel_url) {
  // Checked before anything is registered: a branch whose Try cannot be called must not be
  // left for phase 2.
  auto parsed_try = net::ParseUrl(try_url);
  if (!parsed_try) {
    return Status::InvalidArgument("try URL '" + try_url + "' " + parsed_try.status().message());
  }
  const std::string branch_id = BranchIdForIndex(static_cast<std::size_t>(branches_++));

  json registration = TccBody(gid_);
  registration["branch_id"] = branch_id;
  registration["data"] = body;
  registration["confirm"] = confirm_url;
  registration["cancel"] = cancel_url;
  if (auto registered = client_.Post("registerBranch", Dump(registration)); !registered) {
    const Status& s = registered.status();
    return Status(s.code(), "registering branch " + branch_id + ": " + s.message());
  }

  const std::chrono::milliseconds timeout =
      options_.request_timeout && options_.request_timeout->count() > 0
          ? std::chrono::duration_cast<std::chrono::milliseconds>(*options_.request_timeout)
          : client_.options().timeout;
  // Like the coordinator's calls, the Try carries the transaction's branch_headers.
  auto answer = client_.CallUrl(TryCallUrl(*parsed_try, gid_, branch_id), body, timeout,
                                options_.branch_headers);
  if (!answer) {
    return Status::Unavailable("branch " + branch_id + " try: " + answer.status().message());
  }
  const std::string detail = "branch " + branch_id + " try " + try_url + " answered ";
  switch (ClassifyBranchResponse(answer->status, answer->body)) {
    case BranchResult::kSuccess:
      return std::move(answer->body);
    case BranchResult::kFailure:
      return Status::Conflict(detail +
                              "FAILURE: " + net::DescribeAnswer(answer->status, answer->body));
    case BranchResult::kOngoing:
      // The client does not wait for a Try: the transaction cannot go on without its result.
      return Status::Unavailable(detail +
                                 "ONGOING: " + net::DescribeAnswer(answer->status, answer->body));
    case BranchResult::kUnknown:
      break;
  }
  return Status::Unavailable(detail + net::DescribeAnswer(answer->status, answer->body));
}

Result<Outcome> RunTcc(Client& client, const std::string& gid, const TransOptions& options,
                       const std::function<Status(Tcc&)>& body) {
  json prepare = TccBody(gid);
  AddTransOptions(options, prepare);
  if (auto prepared = client.Post("prepare", Dump(prepare)); !prepared) {
    return prepared.status();
  }

  Tcc tcc(client, gid, options);
  const Status result = RunClosure(body, tcc);
  if (result.ok()) return Submit(client, gid, options);
  std::string reason =
      result.message().empty() ? std::string(StatusCodeName(result.code())) : result.message();
  return Abort(client, gid, options, Truncate(reason, kMaxRollbackReasonBytes));
}

}  // namespace settle::sdk
