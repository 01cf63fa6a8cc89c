#pragma once

#include <functional>
#include <string>

#include "settle/core/status.h"
#include "settle/sdk/client.h"  // the HTTP link most callers pass
#include "settle/sdk/coordinator_link.h"
#include "settle/sdk/outcome.h"
#include "settle/sdk/trans_options.h"

namespace settle::sdk {

// The XA transaction a RunXa closure works in. The wire protocol is DTM's: the participant
// prepares its local transaction inside the call and registers the branch with the
// coordinator itself (see postgres_xa.h); the coordinator then calls the branch's phase-2 URL
// with op=commit or op=rollback. Valid during the RunXa closure only (it refers to RunXa's
// client and options). Not thread-safe: the closure's thread calls its branches.
class Xa {
 public:
  const std::string& gid() const { return gid_; }

  // Calls the next branch ("01", "02", ...) itself: POST `url` with `body` (GET when it is
  // empty) and the query parameters gid, trans_type=xa, branch_id, op=action and phase2_url
  // (`phase2_url`, or `url` itself when empty: one URL serves both phases, as DTM's SDKs
  // expect), with the options' branch_headers, traceparent and tracestate. Nothing is
  // registered here: the participant registers the branch once its local transaction is
  // prepared. Returns the answer's body. InvalidArgument for a URL that is not http(s)://;
  // Conflict when the branch answered FAILURE; Unavailable on a timeout or another answer.
  // Return it from the closure and RunXa aborts.
  Result<std::string> CallBranch(const std::string& body, const std::string& url,
                                 const std::string& phase2_url = "");

 private:
  friend Result<Outcome> RunXa(CoordinatorLink&, const std::string&, const TransOptions&,
                               const std::function<Status(Xa&)>&);
  Xa(CoordinatorLink& link, std::string gid, const TransOptions& options)
      : link_(link), gid_(std::move(gid)), options_(options) {}

  CoordinatorLink& link_;
  std::string gid_;
  const TransOptions& options_;
  int branches_ = 0;
};

// Runs an XA transaction as RunTcc runs a TCC: prepare (trans_type "xa", with the options),
// then `body` (which calls CallBranch for each participant), then submit if it returned OK
// (the coordinator commits every registered branch), or abort if it returned an error or threw
// (it rolls them back). The outcome says which: submitted (succeed with wait_result) or
// aborting (failed with wait_result), with the reason of an abort. An error Result only when
// the coordinator could not be told: prepare failed (nothing happened), or submit/abort could
// not be delivered (timeout_to_fail then aborts the transaction).
Result<Outcome> RunXa(CoordinatorLink& link, const std::string& gid, const TransOptions& options,
                      const std::function<Status(Xa&)>& body);

}  // namespace settle::sdk
