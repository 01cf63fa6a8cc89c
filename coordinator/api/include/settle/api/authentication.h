#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "settle/api/access_tokens.h"
#include "settle/api/client_certificates.h"

namespace settle::api {

// Why a request was refused access (docs/operations.md, "Refusals"): a fixed set, so that it can
// label a metric. Each has one answer: 401 (UNAUTHENTICATED) or 403 (PERMISSION_DENIED).
enum class RefusalReason {
  kNoCredentials,        // 401: no token, no console session, no certificate
  kUnknownToken,         // 401: a bearer token (or a sign-in's) that is not known
  kStaleSession,         // 401: a console session cookie unknown or expired, nothing else grants
  kUnmappedCertificate,  // 401: a verified certificate whose subject is not mapped
  kAccessTooLow,         // 403: a token, session or certificate of too low a level
  kCrossSite,            // 403: a browser's request that another site's page made
};
inline constexpr RefusalReason kRefusalReasons[] = {
    RefusalReason::kNoCredentials,       RefusalReason::kUnknownToken, RefusalReason::kStaleSession,
    RefusalReason::kUnmappedCertificate, RefusalReason::kAccessTooLow, RefusalReason::kCrossSite};
// "no_credentials", "unknown_token", "stale_session", "unmapped_certificate",
// "access_too_low", "cross_site".
std::string_view ToString(RefusalReason reason);
// 401 or 403.
int StatusOf(RefusalReason reason);

// Who sent a request to the coordinator's API and what says so: one rule for the HTTP API and
// the gRPC API (docs/protocol.md §1.3). Authentication is on with bearer tokens or a map of
// client certificates; then a request that carries a token is judged by its token alone, and
// one without by its console session (HTTP only: the API server finds it) or else its verified
// client certificate's subject through the map. Off, every request has admin access, named
// "anonymous".
//
// Lifetime: `tokens` and `certificates` must outlive it. Thread-safety: as theirs.
class Authentication {
 public:
  Authentication(const AccessTokens& tokens, const ClientCertificates& certificates)
      : tokens_(tokens), certificates_(certificates) {}

  bool enabled() const { return tokens_.enabled() || certificates_.enabled(); }
  bool certificates() const { return certificates_.enabled(); }

  struct Identified {
    // kCrossSiteCertificate: a mapped certificate a browser sent along with a request another
    // site's page made (the HTTP API tells, from Sec-Fetch-Site and Origin); it grants nothing.
    // kSession: the console's session cookie (the HTTP API's); kSessionWithoutConsoleHeader:
    // a live session on a change that lacks the console's own header; it grants nothing.
    enum class By {
      kNothing,
      kToken,
      kCertificate,
      kUnmappedCertificate,
      kCrossSiteCertificate,
      kSession,
      kSessionWithoutConsoleHeader,
    };
    Caller caller;
    By by = By::kNothing;
    // The request carried a console session cookie that is unknown or expired, and was judged
    // without it (by its certificate, or by nothing): a refusal names the session.
    bool stale_session = false;
  };
  // `authorization`: the request's "Bearer <token>" (null: none was sent); `peer_subject`: its
  // verified client certificate's subject (empty: none). With certificates only, a token is
  // still judged, and grants nothing, as no token is known.
  Identified Identify(const std::string* authorization, std::string_view peer_subject) const;

  // Why `identified` may not do what needs `needed`; nullopt when it may. `action` names what
  // was asked ("POST /api/settle/submit", "Submit"), `token_syntax` how a token is sent there
  // ("Authorization: Bearer <token>"). A refusal's message starts "authorization: ".
  struct Refusal {
    bool unauthenticated = true;  // 401 (UNAUTHENTICATED); false: 403 (PERMISSION_DENIED)
    std::string message;          // names the token's or certificate's name, never a token
    RefusalReason reason = RefusalReason::kNoCredentials;
  };
  std::optional<Refusal> Authorize(const Identified& identified, Access needed,
                                   std::string_view action, std::string_view peer_subject,
                                   std::string_view token_syntax) const;

 private:
  const AccessTokens& tokens_;
  const ClientCertificates& certificates_;
};

}  // namespace settle::api
