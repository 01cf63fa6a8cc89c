#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "settle/core/status.h"

// The vocabulary of docs/protocol.md (§1.4 identifiers, §2 statuses and ops), shared by the
// coordinator and the participant SDK.
namespace settle {

enum class TransType { kTcc, kSaga, kMsg, kXa, kWorkflow };
// How many TransType values there are: what arrays indexed by a type hold.
inline constexpr std::size_t kTransTypeCount = 5;
enum class GlobalStatus { kPrepared, kSubmitted, kAborting, kSucceed, kFailed };
enum class BranchStatus { kPrepared, kSucceed, kFailed };
// kTry is the call made before phase 2; the coordinator itself calls confirm/cancel (TCC),
// action/compensate (saga), action (a message's delivery), msg (a prepared message's
// query_prepared back-check, branch "00"), commit/rollback (XA's phase 2) and resume (a
// workflow's query_prepared, branch "00", which the call names by the workflow's name). A
// workflow's step log records action, commit, rollback and business (an XA step's local
// transaction) as its client reports them: the coordinator calls none of those.
enum class BranchOp {
  kTry,
  kConfirm,
  kCancel,
  kAction,
  kCompensate,
  kMsg,
  kCommit,
  kRollback,
  kBusiness,
  kResume
};
// How many BranchOp values there are: what arrays indexed by an op hold.
inline constexpr std::size_t kBranchOpCount = 10;

std::string_view ToString(TransType t);
std::string_view ToString(GlobalStatus s);
std::string_view ToString(BranchStatus s);
std::string_view ToString(BranchOp op);

std::optional<TransType> ParseTransType(std::string_view s);
std::optional<GlobalStatus> ParseGlobalStatus(std::string_view s);
std::optional<BranchStatus> ParseBranchStatus(std::string_view s);
std::optional<BranchOp> ParseBranchOp(std::string_view s);

inline bool IsTerminal(GlobalStatus s) {
  return s == GlobalStatus::kSucceed || s == GlobalStatus::kFailed;
}

inline constexpr std::size_t kMaxGidLength = 128;
inline constexpr std::size_t kMaxBranchIdLength = 128;

// Where settled's countersignature of a registered Try travels back to the initiator
// (docs/protocol.md §4.9): the member of an HTTP registerBranch answer (an object of the
// fields to send with the Try), and the prefix of the gRPC RegisterBranch answer's initial
// metadata (each field's lowercase name after it).
inline constexpr std::string_view kTrySignatureMember = "try_signature";
inline constexpr std::string_view kTrySignatureMetadataPrefix = "settle-try-";

// 1..128 characters of [A-Za-z0-9_.:-].
bool IsValidGid(std::string_view gid);
// Branch ids follow the same rule as gids: they travel in query strings and logs.
bool IsValidBranchId(std::string_view branch_id);

// Topics (a message step's topic://NAME) follow the same rule.
bool IsValidTopic(std::string_view topic);

// A workflow's name (docs/protocol.md §3.16): 1 to kMaxWorkflowNameLength printable ASCII
// characters (it travels as the resume call's op query parameter and as gRPC metadata), and
// not a branch op. Settled checks it at prepareWorkflow, the SDK when a workflow is registered.
inline constexpr std::size_t kMaxWorkflowNameLength = 256;
// OK, or InvalidArgument saying what `name` breaks, for the caller to put after what it calls
// the name: "required: the workflow's name", "must be 1 to 256 printable ASCII characters" or
// "must not be a branch op (...)".
Status CheckWorkflowName(std::string_view name);
// Whether `name` is one of BranchOp's names, compared without case: the part of the rule above
// that a resume's receiver checks of the op it is called with. The resume call carries the
// workflow's name as its op, in what settled signs: a name a participant reads as one of the
// protocol's ops would have settled sign, say, a Try or a confirm that no transaction of that
// kind asked for, to a URL of the client's choosing. Without case, for participants that
// compare so.
bool IsBranchOpName(std::string_view name);
// What the coordinator's refusal (409) of a workflow's action says once the workflow's
// timeout_to_fail has passed (docs/protocol.md §3.16): "gid g timed out (timeout_to_fail N s):
// ...". The SDK reads it as the step failing, so that the workflow rolls back and ends.
inline constexpr std::string_view kWorkflowTimedOut = "timed out (timeout_to_fail";

// "01", "02", ...: the branch id of saga step `index` (0-based) and of the n-th TCC branch an
// SDK registers.
std::string BranchIdForIndex(std::size_t index);

}  // namespace settle
