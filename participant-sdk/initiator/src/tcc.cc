#include "settle/sdk/tcc.h"

#include <utility>

#include "initiator_calls.h"
#include "settle/core/protocol.h"

namespace settle::sdk {
namespace {

constexpr std::string_view kTcc = "tcc";

}  // namespace

Result<std::string> Tcc::CallBranch(const std::string& body, const std::string& try_url,
                                    const std::string& confirm_url, const std::string& cancel_url) {
  // Checked before anything is registered: a branch whose Try cannot be called must not be
  // left for phase 2.
  if (Status s = link_.CheckOwnBranchUrl(try_url); !s.ok()) {
    return Status::InvalidArgument("try URL " + s.message());
  }
  const std::string branch_id = BranchIdForIndex(static_cast<std::size_t>(branches_++));
  const BranchRegistration registration{
      .gid = gid_,
      .trans_type = std::string(kTcc),
      .branch_id = branch_id,
      .data = body,
      .urls = {{"confirm", confirm_url}, {"cancel", cancel_url}, {"try", try_url}},
      .traceparent = options_.traceparent,
      .tracestate = options_.tracestate};
  Result<RegisteredBranch> registered = link_.RegisterBranch(registration);
  if (!registered) {
    const Status& s = registered.status();
    return Status(s.code(), "registering branch " + branch_id + ": " + s.message());
  }
  // With settled's countersignature of this Try, for participants that require it.
  return CallOwnBranch(link_, options_,
                       OwnBranchCall{.url = try_url,
                                     .gid = gid_,
                                     .trans_type = std::string(kTcc),
                                     .branch_id = branch_id,
                                     .op = std::string(ToString(BranchOp::kTry)),
                                     .body = body,
                                     .signature = std::move(registered->try_signature)});
}

Result<Outcome> RunTcc(CoordinatorLink& link, const std::string& gid, const TransOptions& options,
                       const std::function<Status(Tcc&)>& body) {
  if (Status s = PrepareGlobal(link, kTcc, gid, options); !s.ok()) return s;
  Tcc tcc(link, gid, options);
  return FinishGlobal(link, kTcc, gid, options, RunInitiatorBody(body, tcc, "TCC"));
}

}  // namespace settle::sdk
