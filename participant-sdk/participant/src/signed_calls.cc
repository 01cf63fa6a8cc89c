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
  if (!policy.require_signature) out += "; unsigned calls let through";
  return out;
}

namespace {

// The keys `call` must be signed by under `policy`; null when it is let through unchecked: a
// Try an initiator may send unsigned, or any call without a signature while signatures are
// not yet required.
const std::vector<signing::VerifyingKey>* KeysFor(
    const SignedCalls& policy, bool from_initiator,
    const std::vector<std::pair<std::string, std::string>>* fields) {
  const std::vector<signing::VerifyingKey>* keys = &policy.keys;
  if (from_initiator) {
    switch (policy.try_policy) {
      case SignedCalls::TryPolicy::kUnsigned:
        return nullptr;
      case SignedCalls::TryPolicy::kTryKeys:
        keys = &policy.try_keys;
        break;
      case SignedCalls::TryPolicy::kSameKeys:
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
    if (!has_signature) return nullptr;
  }
  return keys;
}

const std::vector<std::pair<std::string, std::string>> kNone;

}  // namespace

signing::Verdict CheckSignedCall(const SignedCalls& policy, const ArrivedCall& call,
                                 std::int64_t now_unix) {
  const std::vector<signing::VerifyingKey>* keys =
      KeysFor(policy, call.from_initiator, call.fields);
  if (keys == nullptr) return signing::Verdict::Accept();
  const std::size_t question = call.target.find('?');
  const signing::SignedRequest request{
      .method = call.method,
      .authority = call.host,
      .path = call.target.substr(0, question),
      .query = question == std::string::npos ? "" : call.target.substr(question + 1),
      .body = call.body};
  const signing::VerifyPolicy verify{
      .keys = *keys, .window = policy.window, .check_authority = policy.check_authority};
  return signing::VerifyRequest(request, call.fields != nullptr ? *call.fields : kNone, verify,
                                now_unix);
}

signing::Verdict CheckSignedGrpcCall(const SignedCalls& policy, const ArrivedGrpcCall& call,
                                     std::int64_t now_unix) {
  const std::vector<signing::VerifyingKey>* keys =
      KeysFor(policy, call.from_initiator, call.metadata);
  if (keys == nullptr) return signing::Verdict::Accept();
  const signing::SignedGrpcCall arrived{
      .authority = call.authority,
      .method = call.method,
      .metadata = call.metadata != nullptr ? *call.metadata : kNone,
      .message = call.message};
  const signing::VerifyPolicy verify{
      .keys = *keys, .window = policy.window, .check_authority = policy.check_authority};
  return signing::VerifyGrpcCall(arrived, verify, now_unix);
}

}  // namespace settle::sdk
