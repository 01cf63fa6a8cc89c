#pragma once

#include <string>

#include "answer.h"
#include "settle/core/protocol.h"

namespace settle::checker {

// One branch call, as the coordinator (or a client SDK, for try) makes it.
struct BranchCall {
  std::string url;  // the branch URL, without the protocol's query parameters
  std::string gid;
  TransType trans_type = TransType::kTcc;
  std::string branch_id;
  BranchOp op = BranchOp::kTry;
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
};

}  // namespace settle::checker
