#pragma once

#include <exception>
#include <functional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "settle/core/status.h"
#include "settle/sdk/client.h"
#include "settle/sdk/outcome.h"
#include "settle/sdk/trans_options.h"

namespace settle::sdk {

// What the initiators of a TCC and of an XA transaction share (docs/protocol.md §3.3-3.6): both
// prepare the global transaction, call each branch themselves, and then submit when every
// branch succeeded or abort otherwise. `trans_type` is the protocol's name, "tcc" or "xa".

// {"gid": gid, "trans_type": trans_type}: the start of every call about the transaction.
nlohmann::json GlobalBody(const std::string& gid, std::string_view trans_type);

// JSON text, invalid UTF-8 replaced rather than thrown on.
std::string DumpJson(const nlohmann::json& j);

// POST prepare with the options; the coordinator's refusal as it came.
Status PrepareGlobal(Client& client, std::string_view trans_type, const std::string& gid,
                     const TransOptions& options);

// Submit when `result` is OK, abort with its message as the rollback reason otherwise. The
// outcome says which and, with wait_result, how it ended; an error Result only when the
// coordinator could not be told.
Result<Outcome> FinishGlobal(Client& client, std::string_view trans_type, const std::string& gid,
                             const TransOptions& options, const Status& result);

// The application's closure; an exception becomes Internal, which aborts.
template <typename T>
Status RunInitiatorBody(const std::function<Status(T&)>& body, T& transaction,
                        std::string_view kind) {
  try {
    return body(transaction);
  } catch (const std::exception& e) {
    return Status::Internal("the " + std::string(kind) + " body threw: " + e.what());
  } catch (...) {
    return Status::Internal("the " + std::string(kind) +
                            " body threw an exception that is not a std::exception");
  }
}

// A branch call the initiator makes itself (a TCC's try, an XA branch's action): `call_url`
// already carries the protocol's query parameters; POST with `body` (GET when empty) and the
// options' branch_headers, within request_timeout (or the client's timeout). The answer's body
// on SUCCESS; Conflict on FAILURE; Unavailable on ONGOING (the initiator does not wait), on
// another answer or on none. Messages name "branch <branch_id> <op> <url>".
Result<std::string> CallOwnBranch(Client& client, const TransOptions& options,
                                  const std::string& call_url, const std::string& body,
                                  const std::string& branch_id, std::string_view op,
                                  const std::string& url);

}  // namespace settle::sdk
