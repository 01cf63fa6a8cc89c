#include "settle/signing/request_signature.h"

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
constexpr std::string_view kQuery = "@query";
constexpr std::string_view kContentDigest = "content-digest";

// The value of one of the components Settle signs, as both sides derive it from the request;
// nullopt for a component Settle does not sign. `content_digest` is the Content-Digest field.
std::optional<std::string> ComponentValue(std::string_view name, const SignedRequest& request,
                                          const std::string& content_digest) {
  if (name == kMethod) return AsciiUppercase(request.method);
  if (name == kAuthority) return AsciiLowercase(request.authority);
  if (name == kPath) return request.path.empty() ? std::string("/") : request.path;
  // RFC 9421 §2.2.7: "?" and the query; "?" alone when there is none.
  if (name == kQuery) return "?" + request.query;
  if (name == kContentDigest) return content_digest;
  return std::nullopt;
}

}  // namespace

Result<std::vector<std::pair<std::string, std::string>>> SignRequest(const SignedRequest& request,
                                                                     const SigningKey& key,
                                                                     std::int64_t created_unix,
                                                                     bool cover_authority,
                                                                     std::string_view tag) {
  const std::string content_digest = ContentDigestSha256(request.body);
  SignatureParams params;
  params.components = {std::string(kMethod), std::string(kAuthority), std::string(kPath),
                       std::string(kQuery), std::string(kContentDigest)};
  if (!cover_authority) std::erase(params.components, std::string(kAuthority));
  params.created = created_unix;
  params.keyid = key.keyid();
  params.alg = std::string(AlgorithmName(key.algorithm()));
  params.tag = std::string(tag);

  std::vector<Component> covered;
  for (const std::string& name : params.components) {
    covered.push_back({name, *ComponentValue(name, request, content_digest)});
  }
  Result<std::string> signature = detail::SignComponents(key, covered, params);
  if (!signature) return signature.status();
  return detail::SignatureFields("Content-Digest", content_digest, "Signature-Input", "Signature",
                                 params, *signature);
}

Verdict VerifyRequest(const SignedRequest& request,
                      const std::vector<std::pair<std::string, std::string>>& fields,
                      const VerifyPolicy& policy, std::int64_t now_unix) {
  detail::ArrivedSignature arrived;
  if (Verdict read = detail::ReadSignature(fields, "Signature-Input", "Signature", &arrived);
      !read.ok()) {
    return read;
  }
  const SignatureParams& params = arrived.params;

  // What must be covered, then nothing Settle does not sign.
  std::vector<std::string> required = {std::string(kMethod), std::string(kPath),
                                       std::string(kQuery), std::string(kContentDigest)};
  if (policy.check_authority) required.insert(required.begin() + 1, std::string(kAuthority));
  if (Verdict covered = detail::CheckCovered(params, required); !covered.ok()) return covered;
  for (const std::string& name : params.components) {
    if (!ComponentValue(name, request, "")) {
      // Component names are lowercase (ParseSignatureInput checks them): quoted as they are.
      return Verdict::Refuse(RefusalKind::kMalformed,
                             "component \"" + name + "\" is not one Settle signs");
    }
  }

  if (Verdict tagged = detail::CheckTag(params, policy.tags); !tagged.ok()) return tagged;

  const VerifyingKey* key = nullptr;
  if (Verdict trusted = detail::CheckKeyAndCreated(params, policy, now_unix, &key); !trusted.ok()) {
    return trusted;
  }

  const std::optional<std::string> digest_field = detail::FieldValue(fields, "Content-Digest");
  if (!digest_field) return Verdict::Refuse(RefusalKind::kNotCovered, "no Content-Digest");
  if (*digest_field != ContentDigestSha256(request.body)) {
    return Verdict::Refuse(RefusalKind::kDigestMismatch, "Content-Digest does not match the body");
  }

  std::vector<Component> covered;
  for (const std::string& name : params.components) {
    covered.push_back({name, *ComponentValue(name, request, *digest_field)});
  }
  return detail::CheckSignature(
      *key, covered, params, arrived.signature,
      detail::Authorities{.served = &policy.authorities,
                          .check = policy.check_authority,
                          .arrived = request.authority,
                          .forwarded = detail::ForwardedAuthority(fields, request.authority)});
}

}  // namespace settle::signing
