#pragma once

#include "settle/core/clock.h"
#include "settle/core/status.h"
#include "settle/engine/requests.h"
#include "settle/engine/type_rules.h"
#include "settle/storage/records.h"

// The operations of docs/protocol.md §3 for any transaction type: the rules every request keeps,
// then its type's own (type_rules.h), and what it stores. The driving room runs these without
// asking which type it holds; what needs the store (a message's topic subscribers) it reads
// first and passes in.
namespace settle::engine {

// prepare: TCC, XA or message. InvalidArgument naming the field.
Status CheckPrepare(const PrepareRequest& request);
// prepareWorkflow: a workflow. InvalidArgument naming the field.
Status CheckPrepareWorkflow(const PrepareRequest& request);
// submit: every type.
Status CheckSubmit(const SubmitRequest& request);
// abort: TCC, XA or message.
Status CheckAbort(const AbortRequest& request);
// forceStop: a gid and a reason of at most kMaxReasonLength bytes.
Status CheckForceStop(const ForceStopRequest& request);
// A pause or a resume: a valid gid and a reason, required.
Status CheckPause(const PauseRequest& request);
// registerBranch: a type that takes it, a branch id of 1..128 characters of [A-Za-z0-9_.:-],
// and the type's URLs.
Status CheckRegisterBranch(const RegisterBranchRequest& request);

// The prepared transaction a prepare stores, with the request's fingerprint in its options:
// due when its timeout_to_fail runs out; a message with its back-check and delivery rows.
// InvalidArgument for a topic without subscribers or too many deliveries.
Result<storage::Transaction> BuildPrepared(const PrepareRequest& request,
                                           const TopicSubscribers& subscribers,
                                           const TransactionDefaults& defaults, TimePoint now);
// The submitted transaction a submit creates (SubmitPlan's `creates`), due now, with
// `fingerprint`, the request's FingerprintOf (computed by the caller, which compares it with a
// stored one too: it hashes every payload). Conflict for a type its submit does not create.
Result<storage::Transaction> BuildSubmitted(const SubmitRequest& request,
                                            const TopicSubscribers& subscribers,
                                            const TransactionDefaults& defaults, TimePoint now,
                                            std::string fingerprint);
// The rows a registration stores.
std::vector<storage::BranchRecord> RegisteredRows(const RegisterBranchRequest& request,
                                                  TimePoint now);
// What a registration beyond `max_branches` branches answers.
Status TooManyBranches(const RegisterBranchRequest& request, std::size_t max_branches);

}  // namespace settle::engine
