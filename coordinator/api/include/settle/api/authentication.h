#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "settle/api/access_tokens.h"
#include "settle/api/client_certificates.h"

namespace settle::api {

// Who sent a request to the coordinator's API and what says so: one rule for the HTTP API and
// the gRPC API (docs/protocol.md §1.3). Authentication is on with bearer tokens or a map of
// client certificates; then a request that carries a token is judged by its token alone, and
// one without by its verified client certificate's subject through the map. Off, every
// request has admin access, named "anonymous".
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
    enum class By { kNothing, kToken, kCertificate, kUnmappedCertificate, kCrossSiteCertificate };
    Caller caller;
    By by = By::kNothing;
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
    std::string message;
  };
  std::optional<Refusal> Authorize(const Identified& identified, Access needed,
                                   std::string_view action, std::string_view peer_subject,
                                   std::string_view token_syntax) const;

 private:
  const AccessTokens& tokens_;
  const ClientCertificates& certificates_;
};

}  // namespace settle::api
