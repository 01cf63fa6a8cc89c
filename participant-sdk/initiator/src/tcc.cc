#include "settle/sdk/tcc.h"

#include <utility>

#include <nlohmann/json.hpp>

#include "initiator_calls.h"
#include "settle/core/protocol.h"
#include "settle/core/url.h"

namespace settle::sdk {
namespace {

constexpr std::string_view kTcc = "tcc";

// The Try URL with the query parameters of docs/protocol.md §3.4 and §6.1, as an absolute URL
// again.
std::string TryCallUrl(const Url& url, const std::string& gid, const std::string& branch_id) {
  return (url.tls ? "https://" : "http://") + url.HostPort() +
         url.TargetWith({{"gid", gid},
                         {"trans_type", kTcc},
                         {"branch_id", branch_id},
                         {"op", ToString(BranchOp::kTry)}});
}

}  // namespace

Result<std::string> Tcc::CallBranch(const std::string& body, const std::string& try_url,
                                    const std::string& confirm_url, const std::string& cancel_url) {
  // Checked before anything is registered: a branch whose Try cannot be called must not be
  // left for phase 2.
  auto parsed_try = ParseUrl(try_url);
  if (!parsed_try) {
    return Status::InvalidArgument("try URL '" + try_url + "' " + parsed_try.status().message());
  }
  const std::string branch_id = BranchIdForIndex(static_cast<std::size_t>(branches_++));

  nlohmann::json registration = GlobalBody(gid_, kTcc);
  registration["branch_id"] = branch_id;
  registration["data"] = body;
  registration["confirm"] = confirm_url;
  registration["cancel"] = cancel_url;
  if (auto registered = client_.Post("registerBranch", DumpJson(registration)); !registered) {
    const Status& s = registered.status();
    return Status(s.code(), "registering branch " + branch_id + ": " + s.message());
  }
  return CallOwnBranch(client_, options_, TryCallUrl(*parsed_try, gid_, branch_id), body, branch_id,
                       ToString(BranchOp::kTry), try_url);
}

Result<Outcome> RunTcc(Client& client, const std::string& gid, const TransOptions& options,
                       const std::function<Status(Tcc&)>& body) {
  if (Status s = PrepareGlobal(client, kTcc, gid, options); !s.ok()) return s;
  Tcc tcc(client, gid, options);
  return FinishGlobal(client, kTcc, gid, options, RunInitiatorBody(body, tcc, "TCC"));
}

}  // namespace settle::sdk
