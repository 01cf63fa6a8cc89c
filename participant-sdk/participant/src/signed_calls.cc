#include "settle/sdk/signed_calls.h"

#include <strings.h>

#include "settle/core/file_text.h"
#include "settle/signing/request_signature.h"

namespace settle::sdk {

Result<std::vector<signing::VerifyingKey>> LoadVerifyingKeys(
    const std::vector<std::string>& files) {
  std::vector<signing::VerifyingKey> keys;
  for (const std::string& file : files) {
    Result<std::string> text = ReadFileText(file);
    if (!text) return Status::InvalidArgument(text.status().message());
    auto key = signing::VerifyingKey::FromText(*text);
    if (!key) return Status::InvalidArgument(file + ": " + key.status().message());
    keys.push_back(std::move(*key));
  }
  return keys;
}

Status CheckSignedCall(const SignedCalls& policy, const ArrivedCall& call, std::int64_t now_unix) {
  const std::vector<signing::VerifyingKey>* keys = &policy.keys;
  if (call.from_initiator) {
    switch (policy.try_policy) {
      case SignedCalls::TryPolicy::kUnsigned:
        return Status::Ok();
      case SignedCalls::TryPolicy::kTryKeys:
        keys = &policy.try_keys;
        break;
      case SignedCalls::TryPolicy::kSameKeys:
        break;
    }
  }
  if (!policy.require_signature) {
    bool has_signature = false;
    if (call.fields != nullptr) {
      for (const auto& [name, value] : *call.fields) {
        if (name.size() == 15 && strncasecmp(name.c_str(), "signature-input", 15) == 0) {
          has_signature = true;
        }
      }
    }
    if (!has_signature) return Status::Ok();
  }
  const std::size_t question = call.target.find('?');
  const signing::SignedRequest request{
      .method = call.method,
      .authority = call.host,
      .path = call.target.substr(0, question),
      .query = question == std::string::npos ? "" : call.target.substr(question + 1),
      .body = call.body};
  const signing::VerifyPolicy verify{
      .keys = *keys, .window = policy.window, .check_authority = policy.check_authority};
  static const std::vector<std::pair<std::string, std::string>> kNone;
  return signing::VerifyRequest(request, call.fields != nullptr ? *call.fields : kNone, verify,
                                now_unix);
}

}  // namespace settle::sdk
