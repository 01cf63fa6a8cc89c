#include "settle/sdk/signed_calls.h"

#include <strings.h>

#include "settle/signing/grpc_call_signature.h"
#include "settle/signing/request_signature.h"

namespace settle::sdk {

Result<std::vector<signing::VerifyingKey>> LoadVerifyingKeys(
    const std::vector<std::string>& files) {
  std::vector<signing::VerifyingKey> keys;
  for (const std::string& file : files) {
    auto key = signing::VerifyingKey::FromFile(file);
    if (!key) return key.status();
    keys.push_back(std::move(*key));
  }
  return keys;
}

std::string DescribeTrustedKeys(const SignedCalls& policy) {
  std::string out = signing::DescribeKeys(policy.keys);
  if (policy.try_policy == SignedCalls::TryPolicy::kTryKeys) {
    out += "; Trys and XA actions: " + signing::DescribeKeys(policy.try_keys);
  }
  if (!policy.workflow_keys.empty()) {
    out += "; workflow steps: " + signing::DescribeKeys(policy.workflow_keys);
  }
  if (!policy.require_signature) out += "; unsigned calls let through";
  return out;
}

namespace {

// What `call` must be signed with under `policy`: the keys and the tag. `keys` is null when
// it is let through unchecked: a Try an initiator may send unsigned, or any call without a
// signature while signatures are not yet required.
struct Required {
  const std::vector<signing::VerifyingKey>* keys = nullptr;
  std::vector<std::string> tags = {""};
};

Required RequiredFor(const SignedCalls& policy, CallKind kind,
                     const std::vector<std::pair<std::string, std::string>>* fields) {
  Required required{.keys = &policy.keys};
  if (kind == CallKind::kWorkflowStep) {
    // Its service's, phase 2 included: a workflow service's key, or settled's; never unsigned.
    if (!policy.workflow_keys.empty()) required.keys = &policy.workflow_keys;
  } else if (kind != CallKind::kCoordinators) {
    const bool is_try = kind == CallKind::kTry;
    SignedCalls::TryPolicy try_policy = policy.try_policy;
    // An XA action is registered by the participant after it ran: nothing to countersign. It
    // is the initiator's key's to sign then, or settled's; never let through unsigned.
    if (try_policy == SignedCalls::TryPolicy::kRegistered && !is_try) {
      try_policy = policy.try_keys.empty() ? SignedCalls::TryPolicy::kSameKeys
                                           : SignedCalls::TryPolicy::kTryKeys;
    }
    switch (try_policy) {
      case SignedCalls::TryPolicy::kUnsigned:
        return Required{};
      case SignedCalls::TryPolicy::kTryKeys:
        required.keys = &policy.try_keys;
        break;
      case SignedCalls::TryPolicy::kRegistered:
        required.tags = {std::string(signing::kRegisteredTryTag)};
        break;
      case SignedCalls::TryPolicy::kSameKeys:
        // settled's key, whether an initiator holding it signed or settled countersigned.
        if (is_try) required.tags.emplace_back(signing::kRegisteredTryTag);
        break;
    }
  }
  if (!policy.require_signature) {
    bool has_signature = false;
    if (fields != nullptr) {
      for (const auto& [name, value] : *fields) {
        if (name.size() == 15 && strncasecmp(name.c_str(), "signature-input", 15) == 0) {
          has_signature = true;
        }
      }
    }
    if (!has_signature) return Required{};
  }
  return required;
}

const std::vector<std::pair<std::string, std::string>> kNone;
const std::vector<std::string> kNoNames;

}  // namespace

CallKind BranchCallKind(std::optional<BranchOp> route_op, const BranchRequest& request) {
  if (request.trans_type == TransType::kWorkflow) return CallKind::kWorkflowStep;
  const bool try_route = !route_op || *route_op == BranchOp::kTry;
  return try_route && request.op == BranchOp::kTry ? CallKind::kTry : CallKind::kCoordinators;
}

signing::Verdict CheckSignedCall(const SignedCalls& policy, const ArrivedCall& call,
                                 std::int64_t now_unix) {
  Required required = RequiredFor(policy, call.kind, call.fields);
  if (required.keys == nullptr) return signing::Verdict::Accept();
  const std::size_t question = call.target.find('?');
  const signing::SignedRequest request{
      .method = call.method,
      .authority = call.host,
      .path = call.target.substr(0, question),
      .query = question == std::string::npos ? "" : call.target.substr(question + 1),
      .body = call.body};
  const signing::VerifyPolicy verify{
      .keys = *required.keys,
      .window = policy.window,
      .check_authority = policy.check_authority,
      .authorities = call.authorities != nullptr ? *call.authorities : kNoNames,
      .tags = std::move(required.tags)};
  return signing::VerifyRequest(request, call.fields != nullptr ? *call.fields : kNone, verify,
                                now_unix);
}

signing::Verdict CheckSignedGrpcCall(const SignedCalls& policy, const ArrivedGrpcCall& call,
                                     std::int64_t now_unix) {
  Required required = RequiredFor(policy, call.kind, call.metadata);
  if (required.keys == nullptr) return signing::Verdict::Accept();
  const signing::SignedGrpcCall arrived{
      .authority = call.authority,
      .method = call.method,
      .metadata = call.metadata != nullptr ? *call.metadata : kNone,
      .message = call.message};
  const signing::VerifyPolicy verify{
      .keys = *required.keys,
      .window = policy.window,
      .check_authority = policy.check_authority,
      .authorities = call.authorities != nullptr ? *call.authorities : kNoNames,
      .tags = std::move(required.tags)};
  return signing::VerifyGrpcCall(arrived, verify, now_unix);
}

}  // namespace settle::sdk
