#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "settle/core/status.h"

namespace settle::api {

// What a request may do. Each level includes the ones before it.
enum class Access {
  kNone,
  kRead,    // read transactions and metrics; the admin console's views
  kClient,  // run transactions: newGid, prepare, registerBranch, submit, abort
  kAdmin,   // act on others' transactions: forceStop, resetNextCronTime (retry now)
};

std::string_view ToString(Access access);

// Who sent a request, as far as its token tells: the access it grants and the token's name
// (never the token itself). Without authentication: admin access, named "anonymous".
struct Caller {
  Access access = Access::kNone;
  std::string name;
};

// The bearer tokens settled accepts ("Authorization: Bearer <token>"). Without any token,
// authentication is off and every request has admin access. Several tokens may share a level,
// so that one can be rotated without downtime.
//
// Every token has a name, for logs and the admin console: the comment after it in a token
// file, or else "<level>-token-<n>", n counting that level's tokens from 1 in the order added.
//
// Thread-safety: const methods from any thread once configured.
class AccessTokens {
 public:
  // InvalidArgument naming the problem for a token that is too short (under 16 characters)
  // or holds characters an HTTP header cannot carry. An empty `name` gets the default one.
  Status Add(Access level, std::string token, std::string name = "");

  // Lines of "<read|client|admin> <token>", optionally followed by "# name"; blank lines
  // and lines starting with '#' are skipped. InvalidArgument naming the line for anything
  // else.
  Status AddFromText(std::string_view text);

  bool enabled() const { return !tokens_.empty(); }
  std::size_t size() const { return tokens_.size(); }

  // The access the request's Authorization header grants: kNone without a header or with an
  // unknown token, when authentication is on. Compares tokens in constant time.
  Access Grant(const std::string* authorization) const;
  // The same, with the name of the token that granted it (empty for kNone).
  Caller Identify(const std::string* authorization) const;

 private:
  struct Token {
    Access level;
    std::string value;
    std::string name;
  };
  std::vector<Token> tokens_;
};

// Parses "read", "client" or "admin".
std::optional<Access> ParseAccess(std::string_view text);

}  // namespace settle::api
