#pragma once

#include <cstddef>
#include <vector>

#include "settle/core/status.h"
#include "settle/engine/decision.h"
#include "settle/engine/requests.h"
#include "settle/engine/type_rules.h"

namespace settle::engine {

// TCC's and XA's descriptors (type_rules.h). A branch registration (docs/protocol.md §3.3)
// names http(s) URLs or gRPC methods: TCC's confirm and cancel (and optionally its try), XA's
// one url; it stores two rows, the rollback op's (cancel, XA's rollback) and the commit op's
// (confirm, XA's commit), seq 0, both with the branch's data.
const TypeRules& TccRules();
const TypeRules& XaRules();

// That a TCC registration's try_url (when given) is on the participant its confirm and cancel
// are on: the same origin (scheme, lowercased host, port; a gRPC method's grpc(s)://host:port).
// InvalidArgument "try: ..." otherwise. What settled's countersignature of the Try requires: a
// Try it vouches for must be one that phase 2 reaches.
Status CheckSameParticipant(const RegisterBranchRequest& request);

// The two-phase transactions: the client prepares, registers branches, then submits or aborts,
// and the coordinator finishes every registered branch (docs/protocol.md §2.1, §4.4, §4.7):
// - prepared: waits for the client's submit or abort; once timeout_to_fail has passed since
//   creation, moves to aborting.
// - submitted: calls every branch's commit op in parallel; succeed once all have succeeded.
// - aborting: calls every registered branch's rollback op in parallel; failed once all have
//   succeeded.
// - failed with a rollback row not succeeded, and not force-stopped by an operator (whose
//   undone calls stay undone): left so by a version with the timeout/registration race, the
//   registered branch's Try is reserved. Its rollbacks are called as in aborting, and the
//   status stays failed.
// TCC's ops are confirm and cancel (the participant's barrier turns a cancel without Try into
// a no-op); XA's are commit and rollback of the branch's prepared local transaction, both at
// the branch's one phase-2 URL.
Decision DecideTcc(const storage::Transaction& tx, TimePoint now);
Decision DecideXa(const storage::Transaction& tx, TimePoint now);

}  // namespace settle::engine
