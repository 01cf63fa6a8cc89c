#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "settle/core/status.h"
#include "settle/sdk/branch_request.h"
#include "settle/signing/keys.h"
#include "settle/signing/verdict.h"

namespace settle::sdk {

// Which calls a participant accepts (docs/protocol.md §4.9): only those signed by the
// coordinator's keys (RFC 9421, over the method, authority, path, query and the body's
// digest; a gRPC call's over its method, authority, dtm-* metadata and message's digest),
// refused (HTTP 401, gRPC UNAUTHENTICATED) before the barrier or any handler runs.
struct SignedCalls {
  // The coordinator's public keys (Ed25519) or shared secrets (HMAC-SHA256); several while a
  // key is rotated. They verify every call settled makes: phase 2 (confirm, cancel, commit,
  // rollback), a saga's actions and compensations, a message's deliveries and back-check.
  std::vector<signing::VerifyingKey> keys;
  // A TCC's Try and an XA branch's action come from the initiator, not from settled:
  //   kRegistered  a Try must carry settled's countersignature of its registration (signed by
  //                `keys`, tagged signing::kRegisteredTryTag): registerBranch answers the
  //                initiator with it, for the branch as registered (gid, branch id, the Try's
  //                URL or method, the registered data's digest, the time), and the SDK's
  //                initiators send it along (docs/protocol.md §4.9). A Try nobody registered,
  //                or with another body, another branch or another target, is refused, so an
  //                unsigned Try sent ahead of the initiator's cannot decide what the confirm
  //                does. Only the registration that stored the branch is countersigned, and
  //                only for a Try on the participant of its confirm and cancel. An XA action,
  //                which the participant registers only after it ran, is judged as under
  //                kTryKeys when `try_keys` is set, else as under kSameKeys: never unsigned.
  //                settled must sign (--signing-key) for Trys to pass.
  //   kSameKeys    they must be signed by `keys` too: by an initiator holding settled's key,
  //                or with settled's countersignature (as under kRegistered);
  //   kTryKeys     by one of `try_keys` (the initiators' own keys);
  //   kUnsigned    they are not checked (initiators that cannot sign, such as DTM's SDKs:
  //                the Try then trusts whoever can reach it, as without signatures, while
  //                phase 2 stays settled's alone). The weaker mode: anyone who can reach the
  //                participant and learns a prepared gid can send that gid's Try first, with
  //                the accounts and amounts of their choosing, and the barrier then takes the
  //                initiator's own Try for a duplicate (docs/operations.md).
  enum class TryPolicy { kRegistered, kSameKeys, kTryKeys, kUnsigned };
  TryPolicy try_policy = TryPolicy::kSameKeys;
  std::vector<signing::VerifyingKey> try_keys;
  // A workflow's step calls (trans_type workflow, any op: its action or Try and its phase 2)
  // come from the workflow's own service, which commits and rolls back its steps itself
  // (docs/protocol.md §3.16): they must be signed by one of `workflow_keys` (those services'
  // keys), or by `keys` when it is empty (a service holding settled's key), whatever the Try
  // policy, and are never let through unsigned, since such a call may confirm. A key here is
  // trusted with the phase 2 of any gid it names, as settled is: trust only the services that
  // run workflows against this participant. settled signs no step call of a workflow.
  std::vector<signing::VerifyingKey> workflow_keys;
  // How far a signature's created may lie from this host's clock, either way.
  std::chrono::seconds window{300};
  // Whether a signature must name this participant: be made for one of the authorities it
  // answers to (ParticipantOptions::authorities, GrpcBranchServerOptions::authorities), never
  // for the Host a call arrived with. Off only where settled signs with
  // --unsigned-authority: every participant trusting the key then runs any of its calls.
  bool check_authority = true;
  // Off while signing is being turned on (docs/operations.md, "Signed calls to participants"):
  // a call without Signature-Input (gRPC: signature-input metadata) is let through, one with a
  // signature is still checked.
  bool require_signature = true;
};

// Reads each file as a key (signing::VerifyingKey::FromFile: a PEM Ed25519 key or a secret
// declared "hmac:..."): InvalidArgument naming the file, what it holds and what was expected.
Result<std::vector<signing::VerifyingKey>> LoadVerifyingKeys(const std::vector<std::string>& files);

// The keys `policy` trusts, for a startup log line (nothing of their material):
// "ed25519 ed25519-0123456789abcdef, hmac-sha256 hmac-...", then the Try keys under kTryKeys
// ("; Trys and XA actions: ..."), the workflow keys ("; workflow steps: ...") and "; unsigned
// calls let through" without require_signature.
std::string DescribeTrustedKeys(const SignedCalls& policy);

// Who makes a call, as its route and its query (metadata) say, never as the caller claims: the
// route decides as much as the op, so that no caller picks the policy it is judged by.
enum class CallKind {
  kCoordinators,  // settled's: phase 2, a saga's steps, a message's deliveries, back-checks
  kTry,           // a TCC's Try, on a route that serves Trys: the initiator's
  kXaAction,      // an XA branch's action: the initiator's
  kWorkflowStep,  // any call of a workflow's step (trans_type workflow): its service's
};

// The kind of `request` on a branch route that serves `route_op` (any op when nullopt): a
// workflow's step call whatever its op; a Try where the route serves Trys; else settled's.
CallKind BranchCallKind(std::optional<BranchOp> route_op, const BranchRequest& request);

// One call as it arrived, for CheckSignedCall.
struct ArrivedCall {
  std::string method;
  std::string host;    // the Host field: named in a refusal, never trusted
  std::string target;  // path and query, as sent
  std::string body;
  const std::vector<std::pair<std::string, std::string>>* fields = nullptr;  // every field
  CallKind kind = CallKind::kCoordinators;
  // The names the server answers to ("host:port"): a signature must be made for one of them.
  const std::vector<std::string>* authorities = nullptr;
};

// Accepted when `call` is signed as `policy` asks (or need not be: an unsigned Try under
// kUnsigned, an unsigned call without require_signature); otherwise refused with the kind
// signing::VerifyRequest found and the reason (never the words of a verdict: the coordinator
// must not read a refusal as FAILURE). Under kTryKeys a Try signed by settled's key, not an
// initiator's, is kUnknownKey; under kRegistered a Try without settled's countersignature is
// kUnsigned (none) or kMalformed (signed, but not a countersignature); a countersignature on
// any call but a Try is kMalformed.
signing::Verdict CheckSignedCall(const SignedCalls& policy, const ArrivedCall& call,
                                 std::int64_t now_unix);

// One gRPC call as it arrived (a GrpcBranchServer's), for CheckSignedGrpcCall.
struct ArrivedGrpcCall {
  std::string authority;  // the call's :authority
  std::string method;     // "/bank.Bank/TransOut"
  std::string message;    // the request message's bytes
  const std::vector<std::pair<std::string, std::string>>* metadata = nullptr;  // all of it
  CallKind kind = CallKind::kCoordinators;
  // The names the server answers to ("host:port"): a signature must be made for one of them.
  const std::vector<std::string>* authorities = nullptr;
};

// The same for a gRPC call, whose signature travels as metadata (signing::VerifyGrpcCall):
// check_authority compares the signed authority with the server's authorities.
signing::Verdict CheckSignedGrpcCall(const SignedCalls& policy, const ArrivedGrpcCall& call,
                                     std::int64_t now_unix);

}  // namespace settle::sdk
