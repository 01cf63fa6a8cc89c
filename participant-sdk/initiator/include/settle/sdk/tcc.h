#pragma once

#include <functional>
#include <string>

#include "settle/core/status.h"
#include "settle/sdk/client.h"  // the HTTP link most callers pass
#include "settle/sdk/coordinator_link.h"
#include "settle/sdk/outcome.h"
#include "settle/sdk/trans_options.h"

namespace settle::sdk {

// The TCC transaction a RunTcc closure works in: valid during the closure only (it refers to
// RunTcc's client and options). Not thread-safe: the closure's thread registers its branches.
class Tcc {
 public:
  const std::string& gid() const { return gid_; }

  // Registers the next branch ("01", "02", ...) with its confirm and cancel URLs and `body`,
  // then calls its Try URL itself (POST with the body, or GET when it is empty) with the query
  // parameters gid, trans_type=tcc, branch_id and op=try, the options' branch_headers and
  // their traceparent and tracestate.
  // Returns the Try's answer body.
  // Conflict when the Try answered FAILURE (409 or a FAILURE body) or the coordinator refused
  // the registration; Unavailable on a timeout or another error. Return it from the closure
  // and RunTcc aborts.
  Result<std::string> CallBranch(const std::string& body, const std::string& try_url,
                                 const std::string& confirm_url, const std::string& cancel_url);

 private:
  friend Result<Outcome> RunTcc(CoordinatorLink&, const std::string&, const TransOptions&,
                                const std::function<Status(Tcc&)>&);
  Tcc(CoordinatorLink& link, std::string gid, const TransOptions& options)
      : link_(link), gid_(std::move(gid)), options_(options) {}

  CoordinatorLink& link_;
  std::string gid_;
  const TransOptions& options_;
  int branches_ = 0;
};

// Runs a TCC transaction: prepare, then `body` (which calls CallBranch for each participant),
// then submit if it returned OK, or abort if it returned an error or threw. The outcome says
// which: status submitted (succeed with wait_result) or aborting (failed with wait_result),
// with the reason of an abort. An error Result only when the coordinator could not be told:
// prepare failed (nothing happened), or submit/abort could not be delivered (the
// coordinator's timeout_to_fail then aborts the transaction).
Result<Outcome> RunTcc(CoordinatorLink& link, const std::string& gid, const TransOptions& options,
                       const std::function<Status(Tcc&)>& body);

}  // namespace settle::sdk
