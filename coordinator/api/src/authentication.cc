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

std::string_view ToString(RefusalReason reason) {
  switch (reason) {
    case RefusalReason::kNoCredentials:
      return "no_credentials";
    case RefusalReason::kUnknownToken:
      return "unknown_token";
    case RefusalReason::kStaleSession:
      return "stale_session";
    case RefusalReason::kUnmappedCertificate:
      return "unmapped_certificate";
    case RefusalReason::kAccessTooLow:
      return "access_too_low";
    case RefusalReason::kCrossSite:
      return "cross_site";
  }
  return "no_credentials";
}

int StatusOf(RefusalReason reason) {
  return reason == RefusalReason::kAccessTooLow || reason == RefusalReason::kCrossSite ? 403 : 401;
}

namespace {

Authentication::Refusal Refuse(RefusalReason reason, std::string message) {
  return {StatusOf(reason) == 401, std::move(message), reason};
}

}  // namespace

std::optional<Authentication::Refusal> Authentication::Authorize(
    const Identified& identified, Access needed, std::string_view action,
    std::string_view peer_subject, std::string_view token_syntax) const {
  using By = Identified::By;
  const Access granted = identified.caller.access;
  if (granted >= needed) return std::nullopt;
  if (identified.by == By::kCrossSiteCertificate) {
    return Refuse(RefusalReason::kCrossSite,
                  "authorization: a request another site's page made is not acted on with the "
                  "client certificate the browser sent along (Sec-Fetch-Site, Origin); send a "
                  "bearer token, or use the console of this origin");
  }
  if (identified.by == By::kSessionWithoutConsoleHeader) {
    return Refuse(RefusalReason::kCrossSite,
                  "authorization: a change made with the console's session cookie needs the "
                  "X-Settle-Console header the console's own script sends (another site's page "
                  "cannot add it); send a bearer token instead");
  }
  // The subject is the client's own certificate's, which it knows: nothing is disclosed.
  const std::string unmapped = "the client certificate's subject '" + std::string(peer_subject) +
                               "' is not mapped to an access level (--client-certificates)";
  if (granted == Access::kNone && identified.stale_session) {
    // Named, so that a browser holding an old cookie is told why, whatever else it sent.
    return Refuse(RefusalReason::kStaleSession,
                  "authorization: the console session is unknown or expired (settled restarted, "
                  "or it was signed out or timed out): sign in again at /admin" +
                      (identified.by == By::kUnmappedCertificate ? "; " + unmapped : "") +
                      (identified.by == By::kNothing
                           ? "; or send a bearer token (" + std::string(token_syntax) + ")"
                           : ""));
  }
  if (identified.by == By::kUnmappedCertificate) {
    return Refuse(RefusalReason::kUnmappedCertificate,
                  "authorization: " + unmapped + ", and no bearer token was sent");
  }
  if (granted == Access::kNone) {
    return Refuse(
        identified.by == By::kToken ? RefusalReason::kUnknownToken : RefusalReason::kNoCredentials,
        "authorization: a bearer token is required (" + std::string(token_syntax) + ")" +
            (certificates() ? ", or a client certificate whose subject is mapped" : "") +
            "; none or an unknown one was sent");
  }
  const char* credential = identified.by == By::kCertificate ? "certificate"
                           : identified.by == By::kSession   ? "console session's token"
                                                             : "token";
  return Refuse(RefusalReason::kAccessTooLow,
                "authorization: this " + std::string(credential) + " ('" + identified.caller.name +
                    "') grants " + std::string(ToString(granted)) + " access; " +
                    std::string(action) + " needs " + std::string(ToString(needed)) +
                    (identified.stale_session
                         ? " (the console session cookie sent along is unknown or expired)"
                         : ""));
}

}  // namespace settle::api
