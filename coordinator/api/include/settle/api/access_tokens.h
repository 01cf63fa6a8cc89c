#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "settle/core/status.h"

namespace settle::coordinator {

// What a request may do. Each level includes the ones before it.
enum class Access {
  kNone,
  kRead,    // read transactions and metrics; the admin console's views
  kClient,  // run transactions: newGid, prepare, registerBranch, submit, abort
  kAdmin,   // act on others' transactions: forceStop, resetNextCronTime (retry now)
};

std::string_view ToString(Access access);

// The bearer tokens settled accepts ("Authorization: Bearer <token>"). Without any token,
// authentication is off and every request has admin access. Several tokens may share a level,
// so that one can be rotated without downtime.
//
// Thread-safety: const methods from any thread once configured.
class AccessTokens {
 public:
  // InvalidArgument naming the problem for a token that is too short (under 16 characters)
  // or holds characters an HTTP header cannot carry.
  Status Add(Access level, std::string token);

  // Lines of "<read|client|admin> <token>", optionally followed by "# comment"; blank lines
  // and lines starting with '#' are skipped. InvalidArgument naming the line for anything
  // else.
  Status AddFromText(std::string_view text);

  bool enabled() const { return !tokens_.empty(); }
  std::size_t size() const { return tokens_.size(); }

  // The access the request's Authorization header grants: kNone without a header or with an
  // unknown token, when authentication is on. Compares tokens in constant time.
  Access Grant(const std::string* authorization) const;

 private:
  struct Token {
    Access level;
    std::string value;
  };
  std::vector<Token> tokens_;
};

// Parses "read", "client" or "admin".
std::optional<Access> ParseAccess(std::string_view text);

}  // namespace settle::coordinator
