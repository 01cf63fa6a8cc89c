#include "settle/sdk/xa.h"

#include "initiator_calls.h"
#include "settle/core/protocol.h"

namespace settle::sdk {
namespace {

constexpr std::string_view kXa = "xa";
constexpr std::string_view kAction = "action";

}  // namespace

Result<std::string> Xa::CallBranch(const std::string& body, const std::string& url,
                                   const std::string& phase2_url) {
  if (Status s = link_.CheckOwnBranchUrl(url); !s.ok()) {
    return Status::InvalidArgument("branch URL " + s.message());
  }
  const std::string& phase2 = phase2_url.empty() ? url : phase2_url;
  // The participant registers this URL, and the coordinator calls it: refused here rather than
  // by the coordinator, after the participant has already prepared.
  if (Status s = link_.CheckOwnBranchUrl(phase2); !s.ok()) {
    return Status::InvalidArgument("phase2 URL " + s.message());
  }
  const std::string branch_id = BranchIdForIndex(static_cast<std::size_t>(branches_++));
  return CallOwnBranch(link_, options_,
                       OwnBranchCall{.url = url,
                                     .gid = gid_,
                                     .trans_type = std::string(kXa),
                                     .branch_id = branch_id,
                                     .op = std::string(kAction),
                                     .extra = {{"phase2_url", phase2}},
                                     .body = body});
}

Result<Outcome> RunXa(CoordinatorLink& link, const std::string& gid, const TransOptions& options,
                      const std::function<Status(Xa&)>& body) {
  if (Status s = PrepareGlobal(link, kXa, gid, options); !s.ok()) return s;
  Xa xa(link, gid, options);
  return FinishGlobal(link, kXa, gid, options, RunInitiatorBody(body, xa, "XA"));
}

}  // namespace settle::sdk
