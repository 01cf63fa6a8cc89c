#include "shared_bodies.h"

#include <map>
#include <utility>

namespace settle::storage {

std::optional<BodyHolder> StoredBodyHolder(std::string branch_id, const std::string& op) {
  if (branch_id.empty()) return std::nullopt;
  // An unknown op cannot name a row: kept as one no row has, so that ShareBodies reports it.
  const std::optional<BranchOp> parsed = ParseBranchOp(op);
  return BodyHolder{parsed ? std::move(branch_id) : branch_id + "/" + op,
                    parsed.value_or(BranchOp::kAction)};
}

Status ShareBodies(const std::string& gid, std::vector<BranchRecord>& branches,
                   const std::vector<std::optional<BodyHolder>>& holders) {
  // Keys view the rows' own branch ids, which outlive the map.
  using Key = std::pair<std::string_view, BranchOp>;
  std::map<Key, std::size_t> holding;
  for (std::size_t i = 0; i < branches.size(); ++i) {
    if (!holders[i]) holding.emplace(Key(branches[i].branch_id, branches[i].op), i);
  }
  for (std::size_t i = 0; i < branches.size(); ++i) {
    if (!holders[i]) continue;
    const auto found = holding.find(Key(holders[i]->branch_id, holders[i]->op));
    if (found == holding.end()) {
      return Status::Internal("stored transaction " + gid + " is corrupt: branch " +
                              branches[i].branch_id + " shares the body of branch " +
                              holders[i]->branch_id + "/" + std::string(ToString(holders[i]->op)) +
                              ", which holds none");
    }
    branches[i].data = branches[found->second].data;
  }
  return Status::Ok();
}

}  // namespace settle::storage
