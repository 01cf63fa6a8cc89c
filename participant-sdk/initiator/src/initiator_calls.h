#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "settle/core/status.h"
#include "settle/sdk/caught.h"
#include "settle/sdk/coordinator_link.h"
#include "settle/sdk/outcome.h"
#include "settle/sdk/trans_options.h"

namespace settle::sdk {

// What the initiators of a TCC and of an XA transaction share (docs/protocol.md §3.3-3.6): both
// prepare the global transaction, call each branch themselves, and then submit when every
// branch succeeded or abort otherwise. `trans_type` is the protocol's name, "tcc" or "xa".

// Prepare with the options; the coordinator's refusal as it came.
Status PrepareGlobal(CoordinatorLink& link, std::string_view trans_type, const std::string& gid,
                     const TransOptions& options);

// Submit when `result` is OK, abort with its message as the rollback reason otherwise. The
// outcome says which and, with wait_result, how it ended; an error Result only when the
// coordinator could not be told.
Result<Outcome> FinishGlobal(CoordinatorLink& link, std::string_view trans_type,
                             const std::string& gid, const TransOptions& options,
                             const Status& result);

// The application's closure; an exception becomes Internal, which aborts.
template <typename T>
Status RunInitiatorBody(const std::function<Status(T&)>& body, T& transaction,
                        std::string_view kind) {
  return Caught("the " + std::string(kind) + " body", [&] { return body(transaction); });
}

// A branch call the initiator makes itself (a TCC's try, an XA branch's action), through the
// link: `call` without its timeout, which is request_timeout or else the link's, and its
// headers, the options' branch_headers and trace fields (TraceFields, in place of
// branch_headers of the same names). The answer's body on SUCCESS; Conflict on FAILURE;
// Unavailable on ONGOING (the initiator does not wait), on another answer or on none.
// Messages name "branch <branch_id> <op> <url>".
Result<std::string> CallOwnBranch(CoordinatorLink& link, const TransOptions& options,
                                  OwnBranchCall call);

}  // namespace settle::sdk
