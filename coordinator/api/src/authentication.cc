#include "settle/api/authentication.h"

namespace settle::api {

Authentication::Identified Authentication::Identify(const std::string* authorization,
                                                    std::string_view peer_subject) const {
  using By = Identified::By;
  if (!enabled()) return {Caller{Access::kAdmin, "anonymous"}, By::kNothing};
  if (authorization != nullptr) {
    if (!tokens_.enabled()) return {Caller{}, By::kToken};
    return {tokens_.Identify(authorization), By::kToken};
  }
  if (!peer_subject.empty() && certificates_.enabled()) {
    if (std::optional<Caller> caller = certificates_.Identify(peer_subject)) {
      return {std::move(*caller), By::kCertificate};
    }
    return {Caller{}, By::kUnmappedCertificate};
  }
  return {Caller{}, By::kNothing};
}

std::optional<Authentication::Refusal> Authentication::Authorize(
    const Identified& identified, Access needed, std::string_view action,
    std::string_view peer_subject, std::string_view token_syntax) const {
  using By = Identified::By;
  const Access granted = identified.caller.access;
  if (granted >= needed) return std::nullopt;
  if (identified.by == By::kCrossSiteCertificate) {
    return Refusal{false,
                   "authorization: a request another site's page made is not acted on with the "
                   "client certificate the browser sent along (Sec-Fetch-Site, Origin); send a "
                   "bearer token, or use the console of this origin"};
  }
  if (identified.by == By::kUnmappedCertificate) {
    // The subject is the client's own certificate's, which it knows: nothing is disclosed.
    return Refusal{true, "authorization: the client certificate's subject '" +
                             std::string(peer_subject) +
                             "' is not mapped to an access level (--client-certificates), and "
                             "no bearer token was sent"};
  }
  if (granted == Access::kNone) {
    return Refusal{true,
                   "authorization: a bearer token is required (" + std::string(token_syntax) + ")" +
                       (certificates() ? ", or a client certificate whose subject is mapped" : "") +
                       "; none or an unknown one was sent"};
  }
  const char* credential = identified.by == By::kCertificate ? "certificate" : "token";
  return Refusal{false, "authorization: this " + std::string(credential) + " ('" +
                            identified.caller.name + "') grants " + std::string(ToString(granted)) +
                            " access; " + std::string(action) + " needs " +
                            std::string(ToString(needed))};
}

}  // namespace settle::api
