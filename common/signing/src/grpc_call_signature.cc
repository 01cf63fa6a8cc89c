#include "settle/signing/grpc_call_signature.h"

#include <algorithm>
#include <optional>

#include "settle/core/ascii.h"
#include "settle/signing/content_digest.h"
#include "settle/signing/signature_base.h"
#include "verification_steps.h"

namespace settle::signing {
namespace {

constexpr std::string_view kMethod = "@method";
constexpr std::string_view kAuthority = "@authority";
constexpr std::string_view kPath = "@path";
constexpr std::string_view kContentDigest = "content-digest";
constexpr std::string_view kDtmPrefix = "dtm-";
// The metadata keys of the signature itself.
constexpr std::string_view kInputKey = "signature-input";
constexpr std::string_view kSignatureKey = "signature";

bool IsDtmKey(std::string_view name) {
  return name.size() > kDtmPrefix.size() && AsciiLowercase(name.substr(0, 4)) == kDtmPrefix;
}

// The dtm-* keys of `metadata`, lowercased, each once, in the order they first appear.
std::vector<std::string> DtmKeys(const detail::Fields& metadata) {
  std::vector<std::string> keys;
  for (const auto& [name, value] : metadata) {
    if (!IsDtmKey(name)) continue;
    std::string key = AsciiLowercase(name);
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(std::move(key));
  }
  return keys;
}

// The value of a component as both sides derive it from the call; nullopt for one Settle
// does not sign, and for a dtm-* key the call does not carry.
std::optional<std::string> ComponentValue(std::string_view name, const SignedGrpcCall& call,
                                          const std::string& content_digest) {
  if (name == kMethod) return std::string("POST");
  if (name == kAuthority) return AsciiLowercase(call.authority);
  if (name == kPath) return call.method.empty() ? std::string("/") : call.method;
  if (name == kContentDigest) return content_digest;
  if (IsDtmKey(name)) return detail::FieldValue(call.metadata, name);
  return std::nullopt;
}

}  // namespace

Result<std::vector<std::pair<std::string, std::string>>> SignGrpcCall(const SignedGrpcCall& call,
                                                                      const SigningKey& key,
                                                                      std::int64_t created_unix,
                                                                      bool cover_authority,
                                                                      std::string_view tag) {
  const std::string content_digest = ContentDigestSha256(call.message);
  SignatureParams params;
  params.components = {std::string(kMethod), std::string(kAuthority), std::string(kPath)};
  if (!cover_authority) std::erase(params.components, std::string(kAuthority));
  for (std::string& name : DtmKeys(call.metadata)) params.components.push_back(std::move(name));
  params.components.emplace_back(kContentDigest);
  params.created = created_unix;
  params.keyid = key.keyid();
  params.alg = std::string(AlgorithmName(key.algorithm()));
  params.tag = std::string(tag);

  std::vector<Component> covered;
  for (const std::string& name : params.components) {
    covered.push_back({name, *ComponentValue(name, call, content_digest)});
  }
  Result<std::string> signature = detail::SignComponents(key, covered, params);
  if (!signature) return signature.status();
  return detail::SignatureFields(kContentDigest, content_digest, kInputKey, kSignatureKey, params,
                                 *signature);
}

Verdict VerifyGrpcCall(const SignedGrpcCall& call, const VerifyPolicy& policy,
                       std::int64_t now_unix) {
  detail::ArrivedSignature arrived;
  if (Verdict read = detail::ReadSignature(call.metadata, kInputKey, kSignatureKey, &arrived);
      !read.ok()) {
    return read;
  }
  const SignatureParams& params = arrived.params;

  // What must be covered: the call's target and every dtm-* word its handler will read.
  std::vector<std::string> required = {std::string(kMethod), std::string(kPath)};
  if (policy.check_authority) required.emplace_back(kAuthority);
  for (const char* word : {"dtm-gid", "dtm-trans_type", "dtm-branch_id", "dtm-op"}) {
    required.emplace_back(word);
  }
  for (std::string& name : DtmKeys(call.metadata)) {
    if (std::find(required.begin(), required.end(), name) == required.end()) {
      required.push_back(std::move(name));
    }
  }
  required.emplace_back(kContentDigest);
  if (Verdict covered = detail::CheckCovered(params, required); !covered.ok()) return covered;
  // Then nothing Settle does not sign, and no covered word the call lacks.
  for (const std::string& name : params.components) {
    if (ComponentValue(name, call, "")) continue;
    if (!IsDtmKey(name)) {
      // Component names are lowercase (ParseSignatureInput checks them): quoted as they are.
      return Verdict::Refuse(RefusalKind::kMalformed,
                             "component \"" + name + "\" is not one Settle signs");
    }
    return Verdict::Refuse(RefusalKind::kNotCovered,
                           name + " is covered but the call carries no " + name);
  }

  if (Verdict tagged = detail::CheckTag(params, policy.tags); !tagged.ok()) return tagged;

  const VerifyingKey* key = nullptr;
  if (Verdict trusted = detail::CheckKeyAndCreated(params, policy, now_unix, &key); !trusted.ok()) {
    return trusted;
  }

  const std::optional<std::string> digest = detail::FieldValue(call.metadata, kContentDigest);
  if (!digest) return Verdict::Refuse(RefusalKind::kNotCovered, "no content-digest");
  if (*digest != ContentDigestSha256(call.message)) {
    return Verdict::Refuse(RefusalKind::kDigestMismatch,
                           "content-digest does not match the message");
  }

  std::vector<Component> covered;
  for (const std::string& name : params.components) {
    covered.push_back({name, *ComponentValue(name, call, *digest)});
  }
  return detail::CheckSignature(
      *key, covered, params, arrived.signature,
      detail::Authorities{.served = &policy.authorities,
                          .check = policy.check_authority,
                          .arrived = call.authority,
                          .forwarded = detail::ForwardedAuthority(call.metadata, call.authority)});
}

}  // namespace settle::signing
