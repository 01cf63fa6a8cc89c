#include "settle/sdk/xa.h"

#include "initiator_calls.h"
#include "settle/core/protocol.h"
#include "settle/core/url.h"

namespace settle::sdk {
namespace {

constexpr std::string_view kXa = "xa";
constexpr std::string_view kAction = "action";

}  // namespace

Result<std::string> Xa::CallBranch(const std::string& body, const std::string& url,
                                   const std::string& phase2_url) {
  auto parsed = ParseUrl(url);
  if (!parsed)
    return Status::InvalidArgument("branch URL '" + url + "' " + parsed.status().message());
  const std::string& phase2 = phase2_url.empty() ? url : phase2_url;
  // The participant registers this URL: refused here rather than by the coordinator, after
  // the participant has already prepared.
  if (auto checked = ParseUrl(phase2); !checked) {
    return Status::InvalidArgument("phase2 URL '" + phase2 + "' " + checked.status().message());
  }
  const std::string branch_id = BranchIdForIndex(static_cast<std::size_t>(branches_++));
  const std::string call_url = (parsed->tls ? "https://" : "http://") + parsed->HostPort() +
                               parsed->TargetWith({{"gid", gid_},
                                                   {"trans_type", kXa},
                                                   {"branch_id", branch_id},
                                                   {"op", kAction},
                                                   {"phase2_url", phase2}});
  return CallOwnBranch(client_, options_, call_url, body, branch_id, kAction, url);
}

Result<Outcome> RunXa(Client& client, const std::string& gid, const TransOptions& options,
                      const std::function<Status(Xa&)>& body) {
  if (Status s = PrepareGlobal(client, kXa, gid, options); !s.ok()) return s;
  Xa xa(client, gid, options);
  return FinishGlobal(client, kXa, gid, options, RunInitiatorBody(body, xa, "XA"));
}

}  // namespace settle::sdk
