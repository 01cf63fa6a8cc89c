#pragma once

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "participant_server.h"

namespace settle::testing {

// What participants saw of each transaction: gid -> {"01:confirm", ...}.
inline std::map<std::string, std::set<std::string>> OpsByGid(
    const std::vector<ReceivedCall>& calls) {
  std::map<std::string, std::set<std::string>> seen;
  for (const ReceivedCall& call : calls) {
    seen[call.query.at("gid")].insert(call.query.at("branch_id") + ":" + call.query.at("op"));
  }
  return seen;
}

// The branches ("gid/branch_id") one of whose calls arrived before the previous call to the
// same branch was answered: what two coordinators driving one branch at once would cause.
inline std::vector<std::string> OverlappingBranches(const std::vector<ReceivedCall>& calls) {
  std::map<std::string, std::vector<const ReceivedCall*>> by_branch;
  for (const ReceivedCall& call : calls) {
    by_branch[call.query.at("gid") + "/" + call.query.at("branch_id")].push_back(&call);
  }
  std::vector<std::string> overlapping;
  for (auto& [branch, branch_calls] : by_branch) {
    std::sort(branch_calls.begin(), branch_calls.end(),
              [](const ReceivedCall* a, const ReceivedCall* b) {
                return a->received_at < b->received_at;
              });
    for (std::size_t i = 1; i < branch_calls.size(); ++i) {
      if (branch_calls[i]->received_at < branch_calls[i - 1]->answered_at) {
        overlapping.push_back(branch);
        break;
      }
    }
  }
  return overlapping;
}

}  // namespace settle::testing
