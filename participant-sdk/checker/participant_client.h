#pragma once

#include <string>
#include <utility>
#include <vector>

#include "answer.h"
#include "settle/core/protocol.h"

namespace settle::checker {

// How a branch call is signed when the checker holds a key (--signing-key).
enum class Signing {
  kSigned,    // as settled signs (docs/protocol.md §4.9); unsigned without a key
  kUnsigned,  // no signature: what anyone could send
  kTampered,  // signed, then the body changed: what a man in the middle could send
};

// One branch call, as the coordinator (or a client SDK, for try) makes it.
struct BranchCall {
  std::string url;  // the branch URL, without the protocol's query parameters
  std::string gid;
  TransType trans_type = TransType::kTcc;
  std::string branch_id;
  BranchOp op = BranchOp::kTry;
  std::string body;
  Signing signing = Signing::kSigned;
};

// One request to a URL of the service's own (an entry point such as POST /orders), sent as
// given: no protocol query parameters.
struct HttpCall {
  std::string method = "POST";
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;  // besides the client's own
  std::string body;
};

// The checker's only view of the participant: the seam where tests could script answers.
// Implementations never throw; every failure is an Answer.
class ParticipantClient {
 public:
  virtual ~ParticipantClient() = default;
  virtual Answer CallBranch(const BranchCall& call) = 0;
  // Reads the URL the user named as the participant's state.
  virtual Answer GetState(const std::string& url) = 0;
  // Sends one request to a URL of the service's own.
  virtual Answer Call(const HttpCall& call) = 0;
  // Sends every call at once, each on a connection of its own, and waits for all the answers:
  // concurrent duplicates, as a client that retries impatiently sends them. The answers are in
  // the order of `calls`.
  virtual std::vector<Answer> CallAtOnce(const std::vector<HttpCall>& calls) = 0;
};

}  // namespace settle::checker
