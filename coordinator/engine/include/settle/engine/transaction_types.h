#pragma once

#include "settle/core/clock.h"
#include "settle/core/status.h"
#include "settle/engine/request_fingerprint.h"
#include "settle/engine/requests.h"
#include "settle/storage/records.h"

// The operations of docs/protocol.md §3 per transaction type: which rules a request must keep
// and what it stores, from each type's home (saga_engine, msg_engine, two_phase_engine). The
// driving room runs these without asking which type it holds; what needs the store (a
// message's topic subscribers) it reads first and passes in.
namespace settle::engine {

// prepare: TCC, XA or message. InvalidArgument naming the field.
Status CheckPrepare(const PrepareRequest& request);
// submit: every type.
Status CheckSubmit(const SubmitRequest& request);
// abort: TCC, XA or message.
Status CheckAbort(const AbortRequest& request);
// forceStop: a gid and a reason of at most kMaxReasonLength bytes.
Status CheckForceStop(const ForceStopRequest& request);
// A pause or a resume: a valid gid and a reason, required.
Status CheckPause(const PauseRequest& request);

// What a submit does with the gid.
struct SubmitPlan {
  // A prepared transaction of this type moves to submitted (TCC, XA, message).
  bool moves_prepared = false;
  // An absent one is created submitted from the request's steps (saga; a message submitted
  // without a prepare).
  bool creates = false;
  // The request carries the transaction's content (steps, payloads, options): one that finds
  // the gid stored must match the request that created it (request_fingerprint.h). A TCC's or
  // XA's submit carries nothing of the kind: its branches come from registerBranch.
  bool carries_content = false;
  // How such a request is compared with the stored one.
  RepeatRules repeat_rules;
};
SubmitPlan PlanSubmit(TransType type);

// What an abort does with a prepared transaction.
struct AbortPlan {
  GlobalStatus to = GlobalStatus::kAborting;
  // Whether a pass then drives it (TCC and XA cancel their branches; a prepared message has
  // delivered nothing and simply fails).
  bool drives = true;
};
AbortPlan PlanAbort(TransType type);

// The prepared transaction a prepare stores, with the request's fingerprint in its options:
// due when its timeout_to_fail runs out; a message with its back-check and delivery rows.
// InvalidArgument for a topic without subscribers or too many deliveries.
Result<storage::Transaction> BuildPrepared(const PrepareRequest& request,
                                           const TopicSubscribers& subscribers,
                                           const TransactionDefaults& defaults, TimePoint now);
// The submitted transaction a submit creates (PlanSubmit's `creates`), due now, with the
// request's fingerprint.
Result<storage::Transaction> BuildSubmitted(const SubmitRequest& request,
                                            const TopicSubscribers& subscribers,
                                            const TransactionDefaults& defaults, TimePoint now);

}  // namespace settle::engine
