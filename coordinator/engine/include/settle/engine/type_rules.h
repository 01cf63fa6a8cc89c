#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "settle/core/clock.h"
#include "settle/core/protocol.h"
#include "settle/core/status.h"
#include "settle/engine/decision.h"
#include "settle/engine/request_fingerprint.h"
#include "settle/engine/requests.h"
#include "settle/storage/records.h"

// One transaction type, whole: what its requests carry and must keep, the rows they store,
// how it is driven, what its participants' answers mean, and what its calls look like. Each
// type's descriptor is defined in its home (two_phase_engine: TCC and XA; saga_engine;
// msg_engine), and every other room looks a type up here instead of asking which one it holds:
// a new type is a new home and one line of the table (type_rules.cc).
namespace settle::engine {

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
  // The request carries the transaction's outcome (a workflow's req_extra: its status, reason
  // and result), which finishes the prepared transaction; nothing is driven.
  bool records_outcome = false;
};

// What an abort does with a prepared transaction.
struct AbortPlan {
  GlobalStatus to = GlobalStatus::kAborting;
  // Whether a pass then drives it (TCC and XA cancel their branches; a prepared message has
  // delivered nothing and simply fails).
  bool drives = true;
};

// What a participant's FAILURE answer to one of the type's calls means.
enum class FailureMeaning {
  // The row is failed, and the transaction decides on it: a saga's action (the saga rolls
  // back), a message's back-check (its local transaction did not commit).
  kFinal,
  // Asked again like an error: a message's delivery has nothing to roll back.
  kRetried,
  // The call must succeed in the end (confirm, cancel, compensate, commit, rollback): retried,
  // and recorded as the participant's bug.
  kParticipantBug,
};

// What a registered branch names for its phase 2 (registerBranch's fields).
enum class BranchUrls {
  kNone,           // the type takes no registerBranch
  kConfirmCancel,  // TCC: confirm and cancel, and optionally its try (for the countersignature)
  kOneUrl,         // XA: one url, called with op=commit or op=rollback
  kStepOutcome,    // workflow: none; the registration records a step's op, status and data
};

// The keys its custom_data may hold beside "pause_after" (which every type reads).
struct CustomDataKeys {
  // custom_data must be a JSON object when sent (a TCC's or XA's may be any text: DTM gives
  // it no meaning there, and it is kept as it is).
  bool object_required = false;
  bool concurrent_and_orders = false;  // a saga's {"concurrent":true,"orders":{"1":[0]}}
  bool delay = false;                  // a message's {"delay": seconds}
  bool workflow = false;  // a workflow's {"name": its name, "data": its input in base64}
};

struct TypeRules {
  TransType type{};

  // The requests it takes besides submit, by the protocol's names.
  bool takes_prepare = false;
  bool takes_prepare_workflow = false;
  bool takes_abort = false;
  bool takes_register_branch = false;

  // What its requests carry, which the front doors read: steps and payloads (prepare and
  // submit), query_prepared, the URLs of a registered branch, the keys of custom_data.
  bool carries_steps = false;
  bool carries_query_prepared = false;
  BranchUrls branch_urls = BranchUrls::kNone;
  CustomDataKeys custom_data;

  // Its own checks of a request, after the rules every type keeps (gid, options, headers);
  // nullptr: none. InvalidArgument naming the field.
  Status (*check_prepare)(const PrepareRequest&) = nullptr;
  Status (*check_submit)(const SubmitRequest&) = nullptr;
  Status (*check_register_branch)(const RegisterBranchRequest&) = nullptr;

  // The rows a request stores. nullptr: a prepare stores none; a submit creates nothing (the
  // transaction is created by its prepare); the type takes no registration. A prepare's rows
  // get the options the transaction was created with (defaults resolved).
  Result<std::vector<storage::BranchRecord>> (*prepared_rows)(const PrepareRequest&,
                                                              const storage::TransOptions&,
                                                              const TopicSubscribers&,
                                                              TimePoint) = nullptr;
  Result<std::vector<storage::BranchRecord>> (*submitted_rows)(const SubmitRequest&,
                                                               const TopicSubscribers&,
                                                               TimePoint) = nullptr;
  std::vector<storage::BranchRecord> (*registered_rows)(const RegisterBranchRequest&,
                                                        TimePoint) = nullptr;

  SubmitPlan submit;
  AbortPlan abort;
  // How a prepare that finds its gid stored is compared with the one that created it.
  RepeatRules prepare_repeat;

  // How it is driven (decision.h): what to do now, and which rows it will still call.
  Decision (*decide)(const storage::Transaction&, TimePoint) = nullptr;
  std::vector<bool> (*rows_still_called)(const storage::Transaction&) = nullptr;

  // What a FAILURE to a call of `op` means (outcome_recorder.h). An operator may resolve a
  // pending call as failed only where its participant could have answered so (kFinal).
  FailureMeaning (*failure_of)(BranchOp op) = nullptr;
  // Whether a SUCCESS to a call of `op` finishes the row; nullptr: it does. A workflow's resume
  // answers SUCCESS when its handler ran to the end, which its own submit records: a workflow
  // still prepared after one is resumed again (workflow_engine.h).
  bool (*success_is_final)(BranchOp op) = nullptr;

  // Whether timeout_to_fail defaults to TransactionDefaults::prepared_timeout_to_fail when the
  // request leaves it out (a saga has no default deadline).
  bool default_deadline = true;
  // Whether a prepared transaction next needs a look at its timeout_to_fail (a TCC or an XA
  // aborts then, a message is checked back); otherwise when its first row is due (a workflow's
  // resume).
  bool prepared_waits_for_deadline = true;

  // Its calls (docs/protocol.md §4.1): POST even without a body (XA's phase 2, as DTM calls
  // it), and the branch's URL in a gRPC call's phase2_url metadata (XA).
  bool posts_always = false;
  bool sends_phase2_url = false;
  // The op a call of `row` names (the op query parameter, the dtm-op metadata); nullptr: the
  // row's own. A workflow's resume names the workflow.
  std::string (*call_op)(const storage::Transaction&, const storage::BranchRecord& row) = nullptr;
  // Whether a registration's try URL may be countersigned by settled (TCC, §4.9).
  bool countersigns_try = false;

  // "a TCC", "an XA": how an error names one transaction of the type.
  std::string_view article_name;
};

// The type's descriptor.
const TypeRules& RulesOf(TransType type);
// Every type's, in the order the protocol lists them (tcc, saga, msg, xa): what metrics and
// counts iterate.
std::span<const TypeRules* const> AllTypeRules();

// "trans_type: <operation> applies to tcc, xa and msg transactions only": the types whose
// descriptor takes it, named in AllTypeRules' order.
Status RefuseType(std::string_view operation, bool (*takes)(const TypeRules&));

}  // namespace settle::engine
